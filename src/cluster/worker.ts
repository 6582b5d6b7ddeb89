/**
 * A rollout worker: takes prompt groups from the cluster's work queue, plays all episodes of each group on the
 * newest policy version it has (switching versions between groups, never inside one), publishes the group on its own
 * subject (`crucible.trajectories.NAME`, the only one its credentials allow) and only then acknowledges the prompt.
 * While it plays, it sends JetStream a heartbeat every third of the deadline, so a slow group is not handed to
 * another worker; a worker that dies stops the heartbeats and the prompt goes to the next one after
 * `cluster.ack_wait_s`. The run's config comes from the learner (KV key `run`); a worker started
 * with a config of its own is refused at connect when its task or model differs. A LoRA run's versions are adapters:
 * the worker puts the base it loaded on the GPU once (frozen, as the learner holds it) and swaps the adapter. A
 * version's tensors are checked against the model's parameter table (or the adapter's) before they reach the GPU.
 */
import { RunConfig } from "../config/schema.ts";
import { getGpu, type Gpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import { LoraAdapters, type LoraSettings, loraTable } from "../model/lora.ts";
import { loraTransformer } from "../model/lora_model.ts";
import { paramTable } from "../model/params.ts";
import { Transformer } from "../model/transformer.ts";
import { runRollouts } from "../rollout/agent.ts";
import { faultPoint } from "../train/faults.ts";
import { loadModel, openEnv } from "../train/setup.ts";
import type { Consumer, JsMsg } from "./nats_lib.ts";
import { z } from "zod";
import type { Credentials } from "./credentials.ts";
import { decodePrompt, type GroupMessage, type PromptMessage } from "./messages.ts";
import { type Cluster, connectCluster, PROMPTS, retrying, WORKERS } from "./nats.ts";
import { GroupPublisher } from "./publish.ts";
import { checkEntry, fetchVersion, latestVersion, type Malformed } from "./weights.ts";
import type { HostModel, RunEnv } from "../train/types.ts";

/** What the learner writes to KV key `run`. */
export interface RunInfo {
  id: string;
  config: RunConfig;
}

const RunInfoSchema = z.strictObject({ id: z.string().min(1), config: RunConfig });

/** The parts of a config a worker must share with its learner: the task and the model. */
export function runIdentity(c: RunConfig): Record<string, unknown> {
  return {
    task: c.task,
    task_options: c.task_options,
    "model.path": c.model.path,
    "model.tiny": c.model.tiny,
    "model.lora_rank": c.model.lora_rank,
  };
}

/** Throws a TypeError naming the first setting where a worker's config differs from the learner's. */
export function checkSameRun(mine: RunConfig, learner: RunConfig): void {
  const a = runIdentity(mine), b = runIdentity(learner);
  for (const key of Object.keys(a)) {
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) {
      throw new TypeError(
        `This worker's ${key} is ${JSON.stringify(a[key])} but the learner's is ${JSON.stringify(b[key])}; ` +
          "start the worker with the learner's config, or with none (it takes the learner's)",
      );
    }
  }
}

/** Options of {@linkcode runWorker}. */
export interface WorkerOptions {
  url: string;
  name: string;
  /** Its credentials (its name is theirs); none on loopback. */
  creds?: Credentials;
  /** The worker's own config, if given: checked against the learner's. */
  config?: RunConfig;
  line: (text: string) => void;
  /** Polled between groups and while waiting: true ends the worker. */
  stop: () => boolean;
}

interface Policy {
  version: number;
  model: Transformer;
  generator: Generator;
}

/** What a worker keeps across versions: a LoRA run's frozen base on the GPU, once made. */
interface Held {
  base?: Transformer;
}

/** Runs a worker until `stop` says so; returns the groups it played. */
export async function runWorker(o: WorkerOptions): Promise<number> {
  const cl = await connectCluster(o.url, { name: o.name, role: "worker", creds: o.creds, note: o.line });
  try {
    const malformed = ignoring(o);
    const run = await waitForRun(cl, o, malformed);
    if (o.config) checkSameRun(o.config, run.config);
    const env = await openEnv(run.config);
    try {
      const host = await loadModel(run.config, env.task);
      o.line(`Worker ${o.name} joined run ${run.id} at ${o.url} (${run.config.task}, model ${host.source})`);
      return await playLoop(cl, o, { run, env, host, malformed, rerun: () => readRun(cl, malformed) });
    } finally {
      await env.close();
    }
  } finally {
    await cl.close();
  }
}

async function playLoop(
  cl: Cluster,
  o: WorkerOptions,
  w: {
    run: RunInfo;
    env: RunEnv;
    host: HostModel;
    malformed: (m: Malformed) => void;
    rerun: () => Promise<RunInfo | null>;
  },
): Promise<number> {
  const consumer = await retrying("Opening the prompt queue", () => cl.js.consumers.get(PROMPTS, WORKERS));
  const publisher = new GroupPublisher(cl, o.name, o.line);
  let policy: Policy | undefined, played = 0;
  const held: Held = {};
  try {
    while (!o.stop()) {
      const first = await consumer.next({ expires: 1000 }).catch(() => null);
      if (!first) continue;
      const rest = decodePrompt(first.data).groups - 1;
      const extra = await more(cl, consumer, Math.min(groupsPerBatch(w.run.config) - 1, rest)).catch(() => []);
      const msgs = [first, ...extra];
      const prompts: [JsMsg, PromptMessage][] = [];
      for (const msg of msgs) {
        const p = decodePrompt(msg.data);
        if (p.run !== w.run.id) {
          const now = await retrying("Reading the run", () => w.rerun());
          if (!now) {
            msg.nak(1000); // no run entry to play it by (none, or one ignored): it waits for the learner's
            continue;
          }
          if (p.run !== now.id) {
            msg.term(); // a prompt of a run that ended
            continue;
          }
          if (o.config) checkSameRun(o.config, now.config);
          w.run = now;
          policy = release(policy); // a new run numbers its versions from 0 again
          releaseBase(held);
        }
        prompts.push([msg, p]);
      }
      if (prompts.length === 0) continue;
      policy = await ensurePolicy(cl, o, { ...w, held }, policy, Math.max(...prompts.map(([, p]) => p.minVersion)));
      if (!policy) continue;
      const beat = () => prompts.forEach(([m]) => m.working());
      const heartbeat = setInterval(beat, (w.run.config.cluster.ack_wait_s * 1000) / 3);
      try {
        // Prompts of steps with different limits (a round schedule's stages) play in separate rollouts.
        const byOptions = Map.groupBy(prompts, ([, p]) => JSON.stringify(p.options));
        for (const batch of byOptions.values()) {
          const groups = await playGroups(w, policy, batch.map(([m, p]) => [p, m.info.deliveryCount]), o.name);
          for (const [i, [msg]] of batch.entries()) {
            const stored = await publisher.publish(groups[i]);
            // A group the stream took for another's message never reached the learner: the prompt is played again.
            // A lost ack only means the same; the group played twice is then dropped by the learner as a duplicate.
            if (!stored) msg.nak();
            else await msg.ackAck().catch(() => false);
          }
        }
      } finally {
        clearInterval(heartbeat);
      }
      played += prompts.length;
    }
  } finally {
    release(policy);
    releaseBase(held);
  }
  return played;
}

/** Groups a worker plays at once: cluster.max_groups, at most as many whole groups as the slots hold, at least 1. */
function groupsPerBatch(c: RunConfig): number {
  const fit = Math.max(1, Math.floor(c.rollout.slots / c.rollout.n));
  return c.cluster.max_groups > 0 ? Math.min(c.cluster.max_groups, fit) : fit;
}

/**
 * Up to `max` more prompts (the rest of the first one's step): the queue is watched for up to 200 ms while the
 * learner publishes them, then only as many as it holds are fetched (a fetch for more would wait out its 1 s
 * expiry, and another worker may have taken some).
 */
async function more(cl: Cluster, consumer: Consumer, max: number): Promise<JsMsg[]> {
  if (max <= 0) return [];
  const pendingNow = () => cl.jsm.consumers.info(PROMPTS, WORKERS).then((i) => i.num_pending, () => 0);
  let pending = await pendingNow();
  for (let i = 0; i < 20 && pending < max; i++) {
    await new Promise((r) => setTimeout(r, 10));
    pending = await pendingNow();
  }
  const want = Math.min(max, pending);
  if (want === 0) return [];
  const out: JsMsg[] = [];
  for await (const m of await consumer.fetch({ max_messages: want, expires: 1000 })) out.push(m);
  return out;
}

/**
 * Plays groups together on one policy version (their episodes share the generator's blocks; each episode's
 * samples depend on its own seed alone); timings from the generator's counters, the wall time shared evenly.
 */
async function playGroups(
  w: { run: RunInfo; env: RunEnv; host: HostModel },
  policy: Policy,
  prompts: readonly [PromptMessage, number][],
  worker: string,
): Promise<GroupMessage[]> {
  const g = policy.generator, before = { ...g.timing }, timing = { envSeconds: 0 };
  const t0 = performance.now();
  let done = 0;
  const specs = prompts.flatMap(([p], i) => p.seeds.map((seed) => ({ task: p.task, group: i, seed })));
  const trajectories = await runRollouts(
    { generator: g, tokenizer: w.host.tokenizer, client: w.env.client, task: w.env.task },
    specs,
    {
      ...prompts[0][0].options,
      timing,
      // A test's SIGKILL in the middle of a group: after the first episode, before the last.
      onEpisode: () => ++done === 1 && specs.length > 1 && faultPoint("worker mid-group"),
    },
  );
  const share = (x: number) => x / prompts.length;
  const seconds = {
    play: share((performance.now() - t0) / 1000),
    prefill: share(g.timing.prefillSeconds - before.prefillSeconds),
    decode: share(g.timing.decodeSeconds - before.decodeSeconds),
    env: share(timing.envSeconds),
  };
  return prompts.map(([p, deliveries], i) => ({
    run: p.run,
    id: p.id,
    step: p.step,
    group: p.group,
    version: policy.version,
    worker,
    deliveries,
    seconds,
    trajectories: trajectories.filter((t) => t.group === i).map((t) => ({
      ...t,
      group: p.group,
      version: policy.version,
    })),
  }));
}

/**
 * The newest policy version, at least `minVersion`: waits for the learner to publish it, fetches and checks it,
 * and puts it on the GPU. undefined when a stop was asked while waiting.
 */
async function ensurePolicy(
  cl: Cluster,
  o: WorkerOptions,
  w: { run: RunInfo; host: HostModel; held: Held; malformed: (m: Malformed) => void },
  policy: Policy | undefined,
  minVersion: number,
): Promise<Policy | undefined> {
  const latest = () => retrying("Reading the policy version", () => latestVersion(cl, { malformed: w.malformed }));
  let info = await latest();
  while (!info || info.version < minVersion) {
    if (o.stop()) return policy;
    await new Promise((r) => setTimeout(r, 100));
    info = await latest();
  }
  if (policy && policy.version >= info.version) return policy;
  const found = info;
  // The tensors a version must hold: the model's parameter table, or a LoRA run's adapter table.
  const table = found.lora ? loraTable(w.host.config, found.lora) : paramTable(w.host.config);
  const tensors = await retrying(`Fetching policy version ${found.version}`, () => fetchVersion(cl, found, table));
  release(policy);
  const c = w.run.config, gpu = await getGpu();
  const model = found.lora
    ? adapterModel(gpu, w, found.lora, tensors)
    : Transformer.fromHost(gpu, w.host.config, tensors);
  const generator = new Generator(model, {
    slots: c.rollout.slots,
    maxLen: c.rollout.max_prompt_length + c.rollout.max_response_length,
    blockSteps: c.rollout.block_steps,
    cache: c.rollout.kv_cache,
  });
  return { version: info.version, model, generator };
}

/**
 * A LoRA version on the worker: the adapter over the frozen base, which is put on the GPU (f16 where the learner's
 * model.base_dtype makes it so) with the first version and kept for the later ones.
 */
function adapterModel(
  gpu: Gpu,
  w: { run: RunInfo; host: HostModel; held: Held },
  settings: LoraSettings,
  adapter: Map<string, Float32Array>,
): Transformer {
  const h = w.host, baseDtype = w.run.config.model.base_dtype;
  if (!w.held.base) {
    const first = loraTransformer(gpu, h.config, h.tensors, { settings, adapter, baseDtype });
    w.held.base = new Transformer(gpu, h.config, first.weights);
    return first;
  }
  return new Transformer(gpu, h.config, w.held.base.weights, {
    lora: new LoraAdapters(gpu, h.config, settings, adapter),
  });
}

/** Frees a version's GPU memory: its generator, and its weights, or with LoRA its adapter (the base is held). */
function release(p: Policy | undefined): undefined {
  p?.generator.release();
  if (p?.model.lora) p.model.lora.release();
  else p?.model.weights.release();
  return undefined;
}

function releaseBase(held: Held): void {
  held.base?.weights.release();
  held.base = undefined;
}

/**
 * The run the learner announced, or null before one did. An entry that is not a run the learner writes (its id and
 * a config the schema takes; with credentials no worker can write it) is read as none, and handed to `malformed`.
 */
async function readRun(cl: Cluster, malformed: (m: Malformed) => void): Promise<RunInfo | null> {
  // Before any learner connected, the bucket does not exist (a worker opens it, never makes it): no run yet.
  const e = await cl.kv.get("run").catch((e) => {
    if (/stream not found/i.test((e as Error).message)) return null;
    throw e;
  });
  if (!e || e.operation !== "PUT" || e.length === 0) return null;
  const run = checkEntry(e.string(), RunInfoSchema);
  if (!("why" in run)) return run;
  malformed({ key: "run", revision: e.revision, why: run.why });
  return null;
}

/** Says once per entry that a worker ignores it, instead of ending on it. */
function ignoring(o: WorkerOptions): (m: Malformed) => void {
  const said = new Set<string>();
  return (m) => {
    if (said.has(`${m.key} ${m.revision}`)) return;
    said.add(`${m.key} ${m.revision}`);
    o.line(
      `Worker ${o.name}: ignoring the cluster's ${m.key} entry (revision ${m.revision}), which is not one the ` +
        `learner writes (${m.why}); waiting for the learner's next`,
    );
  };
}

/** The learner's run, once one has started (a line says the worker waits). */
async function waitForRun(cl: Cluster, o: WorkerOptions, malformed: (m: Malformed) => void): Promise<RunInfo> {
  let said = false;
  for (;;) {
    const run = await retrying("Reading the run", () => readRun(cl, malformed));
    if (run) return run;
    if (o.stop()) throw new Error("Stopped before a learner started a run");
    if (!said) o.line(`Worker ${o.name} waits for a learner at ${o.url} (deno task train ... --cluster ${o.url})`);
    said = true;
    await new Promise((r) => setTimeout(r, 500));
  }
}
