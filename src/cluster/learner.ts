/**
 * The learner's side of the cluster, a rollout source for rlStep: it publishes policy version step − 1 (once per
 * step), then the step's prompt groups, and collects the played groups until it has every group of the step,
 * exactly `data.train_batch_size` of them, in group order. A group played twice (a redelivered prompt whose first
 * worker published before it died) is dropped by its (step, group); a group the run's staleness rule (Run.staleness,
 * rollout.max_staleness = k) does not allow at its step is dropped, counted, and its prompt published again. With
 * k > 0 the trainer publishes the prompts of the next k steps ahead (`prepare`), so workers play them while the
 * learner updates. A LoRA run publishes its adapter alone as each version.
 *
 * Nothing read from the stream is trusted: every message passes admit.ts's checks before it can enter a batch. A
 * refused message never trains; it is counted by reason (`rejected_REASON` in the step's metrics, `rejected` in
 * all) and each reason is named once on stderr. A worker with `cluster.max_bad_messages` refusals that were its own
 * fault is dropped: its later messages are refused too. The worker blamed is the one whose subject a message came
 * on, which with credentials only that worker could publish on, directly or through the server's answers to its
 * requests (auth.ts). A step that waits says every 30 s what it knows of why (stall.ts), and puts the version key
 * back if it no longer holds the learner's version.
 */
import type { EpisodeSpec, RolloutOptions } from "../rollout/agent.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { rewardRange } from "../task/task.ts";
import { admit, type AdmitContext, INNOCENT, type Reason } from "./admit.ts";
import { encode, type GroupMessage, type PromptMessage } from "./messages.ts";
import { type Cluster, prepareStreams, PROMPT_SUBJECT, queueDepth, retrying, timedOut, TRAJECTORIES } from "./nats.ts";
import { stallNote, type WorkerSeen } from "./stall.ts";
import { keepVersion, publishVersion, type VersionInfo } from "./weights.ts";
import type { RunInfo } from "./worker.ts";
import type { PlayedStep, RolloutSource, Run } from "../train/types.ts";

/** How often the learner says it is still waiting for groups. */
const WAIT_NOTE_MS = 30_000;

/** The cluster rollout source of a run. */
export class ClusterSource implements RolloutSource {
  readonly id = crypto.randomUUID();
  /** Groups received and not yet taken by a step, by `${step}-${group}`. */
  #groups = new Map<string, GroupMessage>();
  /** Keys of groups a step took: a later copy is a duplicate. */
  #taken = new Set<string>();
  /** Prompt ids whose group was dropped as stale: their late copies are duplicates too. */
  #droppedIds = new Set<string>();
  #prompts = new Map<string, PromptMessage>();
  /** Every id each (step, group)'s prompt was published under (a replay gets a new one). */
  #promptIds = new Map<string, Set<string>>();
  #published = new Set<number>();
  #versions = new Set<number>();
  #version = -1;
  /** The version key as the learner last wrote it. */
  #versionInfo?: VersionInfo;
  /** Per worker heard from: groups taken, the time of the last one (ms), its refusals by reason. */
  #heard = new Map<string, { groups: number; last?: number; refused: Record<string, number> }>();
  #wake: () => void = () => {};
  #counts = { duplicates: 0, stale: 0, rejected: 0 };
  /** Refusals by reason (duplicates are #counts.duplicates), the reasons named on stderr, refusals per worker. */
  #rejected = new Map<Reason, number>();
  #named = new Set<Reason>();
  #bad = new Map<string, number>();
  #dropped = new Set<string>();
  #closed = false;
  #reader?: Promise<void>;

  private constructor(readonly cluster: Cluster, readonly run: Run) {}

  /** Prepares the streams for a new run, announces it in KV and starts reading played groups. */
  static async start(cluster: Cluster, run: Run): Promise<ClusterSource> {
    const c = run.config, slow = { only: timedOut };
    // Every step is idempotent: a request whose answer came too late (a loaded machine) is made again, as the
    // run's later requests are, instead of ending the run before it starts.
    await retrying(
      "Preparing the streams",
      () => prepareStreams(cluster, { ackWaitSeconds: c.cluster.ack_wait_s, maxDeliver: c.cluster.max_deliver }),
      slow,
    );
    const s = new ClusterSource(cluster, run);
    const info: RunInfo = { id: s.id, config: c };
    await cluster.kv.delete("version").catch(() => {});
    await retrying("Announcing the run", () => cluster.kv.put("run", JSON.stringify(info)), slow);
    s.#reader = s.#read();
    return s;
  }

  async #read(): Promise<void> {
    const consumer = await retrying("Reading the played groups", () => this.cluster.js.consumers.get(TRAJECTORIES));
    const messages = await consumer.consume();
    const closed = () => this.#closed;
    const c = this.run.config,
      ctx: AdmitContext = {
        runId: this.id,
        vocabSize: this.run.host.config.vocabSize,
        rewardRange: rewardRange(this.run.env.task, this.run.env.options),
        maxBytes: c.cluster.max_message_bytes,
        prompt: (step, group) => {
          const key = `${step}-${group}`, message = this.#prompts.get(key);
          return message && { message, ids: this.#promptIds.get(key)! };
        },
        published: (v) => this.#versions.has(v),
        seen: (step, group, id) =>
          this.#taken.has(`${step}-${group}`) || this.#groups.has(`${step}-${group}`) || this.#droppedIds.has(id),
        dropped: (name) => this.#dropped.has(name),
      };
    for await (const m of messages) {
      if (closed()) break;
      const v = admit({ data: m.data, subject: m.subject, id: m.headers?.get("Nats-Msg-Id") || undefined }, ctx);
      if (v.ok) {
        this.#groups.set(`${v.group.step}-${v.group.group}`, v.group);
        const w = this.#worker(v.group.worker);
        w.groups++;
        w.last = performance.now();
        this.#wake();
      } else this.#refuse(v.reason, v.detail, v.worker);
    }
  }

  /** Counts a refused message, names its reason once, and drops a worker past cluster.max_bad_messages. */
  #refuse(reason: Reason, detail: string, worker: string): void {
    const refused = this.#worker(worker).refused;
    refused[reason] = (refused[reason] ?? 0) + 1;
    if (reason === "duplicate") {
      this.#counts.duplicates++;
      return;
    }
    this.#counts.rejected++;
    this.#rejected.set(reason, (this.#rejected.get(reason) ?? 0) + 1);
    if (!this.#named.has(reason)) {
      this.#named.add(reason);
      console.error(
        `Refused a group message on worker ${worker}'s subject (${reason}: ${detail}); it will not train. Later ` +
          `refusals for ${reason} are counted in metrics.jsonl (rejected_${reason}), not printed.`,
      );
    }
    if (INNOCENT.has(reason) || this.#dropped.has(worker)) return;
    const n = (this.#bad.get(worker) ?? 0) + 1;
    this.#bad.set(worker, n);
    if (n >= this.run.config.cluster.max_bad_messages) {
      this.#dropped.add(worker);
      console.error(
        `Dropped worker ${worker} after ${n} refused messages (cluster.max_bad_messages): everything it sends is ` +
          `refused from now on. If its credentials may be in the wrong hands: deno task cluster revoke ${worker}`,
      );
    }
  }

  /** Publishes policy version `version` (the learner's current weights, or adapter) unless it is out already. */
  async #publishVersion(version: number): Promise<{ seconds: number; bytes?: number }> {
    if (version <= this.#version) return { seconds: 0 };
    const t0 = performance.now();
    const lora = this.run.learner.model.lora;
    const w = lora?.tensors ?? this.run.learner.model.weights;
    const host = await w.toHost();
    const shaped = new Map(w.specs.map((s) => [s.name, { shape: s.shape, data: host.get(s.name)! }]));
    // The versions a prompt in the queue may still ask for, and the one being published.
    const keep = this.run.staleness.k + 2;
    const info = await retrying(
      `Publishing policy version ${version}`,
      () => publishVersion(this.cluster, version, shaped, { keep, lora: lora?.settings }),
    );
    this.#version = version;
    this.#versionInfo = info;
    this.#versions.add(version);
    return { seconds: (performance.now() - t0) / 1000, bytes: info.bytes };
  }

  /** Publishes a step's prompt groups (once): one message per group, all rollout.n seeds in it. */
  async prepare(step: number, specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<void> {
    if (this.#published.has(step)) return;
    this.#published.add(step);
    const { onEpisode: _, timing: __, ...options } = o;
    const byGroup = new Map<number, EpisodeSpec[]>();
    for (const s of specs) byGroup.set(s.group, [...(byGroup.get(s.group) ?? []), s]);
    const messages = [...byGroup].map(([group, list]): PromptMessage => ({
      run: this.id,
      id: `${this.id}-s${step}-g${group}-r0`,
      step,
      group,
      groups: byGroup.size,
      task: list[0].task,
      seeds: list.map((s) => s.seed),
      minVersion: this.run.staleness.oldest(step),
      options,
    }));
    await Promise.all(messages.map((p) => this.#publishPrompt(p)));
  }

  async #publishPrompt(p: PromptMessage): Promise<void> {
    const key = `${p.step}-${p.group}`;
    this.#prompts.set(key, p);
    this.#promptIds.set(key, (this.#promptIds.get(key) ?? new Set()).add(p.id));
    await retrying("Publishing a prompt", () => this.cluster.js.publish(PROMPT_SUBJECT, encode(p), { msgID: p.id }));
  }

  /** Plays a step over the cluster: see the module header. */
  async play(step: number, specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<PlayedStep> {
    const published = await this.#publishVersion(step - 1);
    await this.prepare(step, specs, o);
    const groups = [...new Set(specs.map((s) => s.group))];
    const counts0 = { ...this.#counts }, rejected0 = new Map(this.#rejected);
    const t0 = performance.now();
    let noted = t0, replayed = 0;
    const rule = this.run.staleness;
    for (;;) {
      for (const g of groups) {
        const got = this.#groups.get(`${step}-${g}`);
        if (!got || rule.usable(got.version, step)) continue;
        // Sampled too long ago: drop, count, and play the prompt again on a newer version.
        this.#groups.delete(`${step}-${g}`);
        this.#droppedIds.add(got.id);
        this.#counts.stale += got.trajectories.length;
        const p = this.#prompts.get(`${step}-${g}`)!;
        const retry = Number(p.id.slice(p.id.lastIndexOf("-r") + 2)) + 1;
        await this.#publishPrompt({
          ...p,
          id: `${p.id.slice(0, p.id.lastIndexOf("-r"))}-r${retry}`,
          minVersion: step - 1,
        });
      }
      if (groups.every((g) => this.#groups.has(`${step}-${g}`))) break;
      const woke = new Promise<void>((r) => (this.#wake = r));
      await Promise.race([woke, new Promise((r) => setTimeout(r, 1000))]);
      if (performance.now() - noted > WAIT_NOTE_MS) {
        noted = performance.now();
        const have = groups.filter((g) => this.#groups.has(`${step}-${g}`)).length;
        this.run.rep.line(await this.#stalled(step, have, groups.length, (noted - t0) / 1000));
      }
    }
    const waited = (performance.now() - t0) / 1000;
    const played = groups.map((g) => {
      const key = `${step}-${g}`, m = this.#groups.get(key)!;
      this.#groups.delete(key);
      this.#taken.add(key);
      if (m.deliveries > 1) replayed++;
      return m;
    });
    const trajectories: Trajectory[] = played.flatMap((m) => m.trajectories);
    const depth = await queueDepth(this.cluster).catch(() => undefined);
    const metrics: Record<string, number> = {
      cluster_wait_s: waited,
      cluster_publish_s: published.seconds,
      ...(published.bytes === undefined ? {} : { cluster_version_bytes: published.bytes }),
      duplicates_dropped: this.#counts.duplicates - counts0.duplicates,
      rejected: this.#counts.rejected - counts0.rejected,
      prompts_replayed: replayed,
      ...(depth ? { queue_pending: depth.pending, queue_playing: depth.playing } : {}),
      ...workerMetrics(played, step - 1),
    };
    // Groups dropped as stale before this step's rlStep sees them: rlStep adds its own drops to this count.
    if (this.#counts.stale > counts0.stale) metrics.stale_dropped = this.#counts.stale - counts0.stale;
    for (const [reason, n] of this.#rejected) {
      if (n > (rejected0.get(reason) ?? 0)) metrics[`rejected_${reason}`] = n - (rejected0.get(reason) ?? 0);
    }
    const sum = (f: (m: GroupMessage) => number) => played.reduce((a, m) => a + f(m), 0);
    return {
      trajectories,
      seconds: {
        prefill: sum((m) => m.seconds.prefill),
        decode: sum((m) => m.seconds.decode),
        env: sum((m) => m.seconds.env),
      },
      metrics,
    };
  }

  /** What the learner knows of why step `step` waits (stall.ts); puts the version key back if it must. */
  async #stalled(step: number, have: number, want: number, seconds: number): Promise<string> {
    const now = performance.now();
    const workers: WorkerSeen[] = [...this.#heard].map(([name, w]) => ({
      name,
      groups: w.groups,
      ...(w.last === undefined ? {} : { lastSeconds: (now - w.last) / 1000 }),
      refused: w.refused,
      dropped: this.#dropped.has(name),
    }));
    const info = this.#versionInfo;
    const versionKey = info ? await keepVersion(this.cluster, info).catch(() => undefined) : undefined;
    return stallNote({
      step,
      have,
      want,
      seconds,
      url: this.cluster.url,
      queue: await queueDepth(this.cluster).catch(() => undefined),
      workers,
      refused: this.#counts.rejected,
      duplicates: this.#counts.duplicates,
      versionKey,
    });
  }

  #worker(name: string) {
    let w = this.#heard.get(name);
    if (!w) this.#heard.set(name, w = { groups: 0, refused: {} });
    return w;
  }

  /** Stops reading and leaves the streams as they are (a resumed learner purges them). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake();
    await this.cluster.close();
    await this.#reader?.catch(() => {});
  }
}

/** Per worker of a step: episodes per second of its play time, and how many versions behind it sampled. */
export function workerMetrics(played: readonly GroupMessage[], learnerVersion: number): Record<string, number> {
  const by = new Map<string, { episodes: number; seconds: number; behind: number; groups: number }>();
  for (const m of played) {
    const w = by.get(m.worker) ?? { episodes: 0, seconds: 0, behind: 0, groups: 0 };
    w.episodes += m.trajectories.length;
    w.seconds += m.seconds.play;
    w.behind += learnerVersion - m.version;
    w.groups++;
    by.set(m.worker, w);
  }
  const out: Record<string, number> = { workers: by.size };
  for (const [name, w] of by) {
    if (w.seconds > 0) out[`worker_${name}_episodes_per_s`] = w.episodes / w.seconds;
    out[`worker_${name}_versions_behind`] = w.behind / w.groups;
  }
  return out;
}
