// A learner that trusts nothing, on a cluster with credentials and TLS (bound to 0.0.0.0, reached on loopback): while
// a learner and worker a train 3 steps, worker m (credentials of its own) sends forged groups for the very prompts
// the step waits on, straight to the stream, each under the message id a worker gives its group (an out-of-vocabulary
// id, NaN log-probs, a reward of 1e9, a future version, an oversized message), a 100 MB message past the server's
// limit, and one of a's groups is replayed (under a's id for the replayed bytes, and under a new id). Each is refused
// by its reason, m is dropped, and the run ends with the in-process run's parameters, bit for bit, at
// rollout.max_staleness=0. Nothing in the run folder or the output holds a secret of the cluster.
import assert from "node:assert/strict";
import { prepareAuth } from "../../src/cluster/auth.ts";
import { readCredentials } from "../../src/cluster/credentials.ts";
import { type GroupMessage, groupMessageId, type PromptMessage } from "../../src/cluster/messages.ts";
import { type Cluster, connectCluster, PROMPT_SUBJECT, PROMPTS, TRAJECTORIES } from "../../src/cluster/nats.ts";
import { startNatsServer } from "../../src/cluster/server.ts";
import { localNames } from "../../src/cluster/tls.ts";
import { noGpu } from "../no_gpu.ts";
import { end, sha, spawnCli } from "../subprocess.ts";
import { learnerArgs, metrics, noNats } from "./helpers.ts";

const FINAL = "checkpoints/final/model.safetensors";
const EXTRA = ["cluster.max_message_bytes=1000000", "cluster.max_bad_messages=8"];
const enc = new TextEncoder(), dec = new TextDecoder();

/** The prompt of `step` once the learner has published it (read by sequence, taking nothing from the queue). */
async function promptOf(observer: Cluster, step: number, done: () => boolean): Promise<PromptMessage | undefined> {
  while (!done()) {
    // deno-lint-ignore no-explicit-any
    const m = await observer.jsm.streams.getMessage(PROMPTS, { last_by_subj: PROMPT_SUBJECT } as any).catch(() => null);
    const p = m ? JSON.parse(dec.decode(m.data)) as PromptMessage : undefined;
    if (p && p.step === step) return p;
    await new Promise((r) => setTimeout(r, 30));
  }
  return undefined;
}

/** Forgeries of a group for prompt `p` from worker m: well-formed but for one thing each. */
function forgeries(p: PromptMessage): [string, GroupMessage][] {
  const episode = (seed: number) => ({
    task: p.task,
    group: p.group,
    seed,
    promptIds: [1, 2, 3],
    responseIds: [4, 5, 6],
    mask: [1, 1, 1],
    logprobs: [-0.1, -0.2, -0.3],
    reward: 1,
    success: true,
    rounds: 1,
    finish: "done" as const,
    firstObservation: "forged",
    turns: [{ text: "craft", action: "craft", observation: "ok", reward: 1, anchor: "0123456789abcdef" }],
    version: p.minVersion,
  });
  const base = (): GroupMessage => ({
    run: p.run,
    id: p.id,
    step: p.step,
    group: p.group,
    version: p.minVersion,
    worker: "m",
    deliveries: 1,
    seconds: { play: 1, prefill: 0, decode: 0, env: 0 },
    trajectories: p.seeds.map(episode),
  });
  const edit = (f: (g: GroupMessage) => void) => {
    const g = base();
    f(g);
    return g;
  };
  return [
    ["token_ids", edit((g) => (g.trajectories[0].responseIds[1] = 1_000_000))],
    ["logprobs", edit((g) => (g.trajectories[0].logprobs[0] = NaN))],
    ["reward", edit((g) => g.trajectories.forEach((t) => (t.reward = 1e9)))],
    ["version", edit((g) => (g.version = p.minVersion + 5, g.trajectories.forEach((t) => (t.version = g.version))))],
    ["size", edit((g) => (g.trajectories[0].firstObservation = "x".repeat(2_000_000)))],
  ];
}

Deno.test({
  name: "cluster: forged, oversized and replayed groups are refused by reason; the run ends bit for bit as in process",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const inproc = spawnCli(["train", ...await learnerArgs(dir, EXTRA), "--run-dir", `${dir}/inproc`]);
    assert.equal((await inproc.done).code, 0, inproc.output());

    const data = `${dir}/nats`;
    const auth = await prepareAuth(data, { workers: ["a", "m"], tlsNames: localNames("0.0.0.0") });
    const server = await startNatsServer({ dataDir: data, host: "0.0.0.0", port: 0, auth });
    const url = server.url.replace("0.0.0.0", "127.0.0.1");
    const file = (name: string) => `${data}/creds/${name}.creds`;
    const worker = spawnCli(["worker", "--cluster", url, "--creds", file("worker-a")]);
    const run = `${dir}/cluster`;
    const learner = spawnCli([
      "train",
      ...await learnerArgs(dir, EXTRA),
      "--run-dir",
      run,
      "--cluster",
      url,
      "--creds",
      file("learner"),
    ]);
    let finished = false;
    learner.done.then(() => (finished = true));
    // A legitimate group refused would leave the learner waiting for good: fail with its output instead.
    const watchdog = setTimeout(() => learner.child.kill("SIGTERM"), 400_000);
    const m = await connectCluster(url, { creds: await readCredentials(file("worker-m")) });
    const a = await connectCluster(url, { creds: await readCredentials(file("worker-a")) });
    const observer = await connectCluster(url, { creds: await readCredentials(file("learner")), role: "worker" });
    let oversized = "";
    try {
      for (let step = 1; step <= 3; step++) {
        const p = await promptOf(observer, step, () => finished);
        if (!p) break;
        for (const [, g] of forgeries(p)) {
          const bytes = enc.encode(JSON.stringify(g));
          await m.js.publish(`crucible.trajectories.m`, bytes, { msgID: groupMessageId("m", bytes) });
        }
        if (step === 2) {
          // A replay of a's latest group, sent again on a's subject with a's credentials: as a redelivered prompt
          // played twice would be (its own bytes, its own id), and under an id outside a's id space.
          const last = { last_by_subj: "crucible.trajectories.a" };
          const got = await observer.jsm.streams.getMessage(TRAJECTORIES, last);
          const again = enc.encode(JSON.stringify({ ...JSON.parse(dec.decode(got!.data)), deliveries: 2 }));
          await a.js.publish("crucible.trajectories.a", again, { msgID: groupMessageId("a", again) });
          await a.js.publish("crucible.trajectories.a", got!.data, { msgID: "a-replayed" });
        }
        if (step === 1) {
          // 100 MB: our client refuses past the server's announced limit; one that ignores it is cut off by the server.
          assert.throws(() => m.nc.publish("crucible.trajectories.m", new Uint8Array(100 << 20)), /max_payload/);
          const raw = await connectCluster(url, { creds: await readCredentials(file("worker-m")) });
          // deno-lint-ignore no-explicit-any
          (raw.nc as any).protocol.info.max_payload = 1 << 30;
          // The server answers -ERR 'Maximum Payload Violation' and drops the connection.
          const status = (async () => {
            for await (const s of raw.nc.status()) if (s.type === "disconnect") return s.type;
            return "";
          })();
          raw.nc.publish("crucible.trajectories.m", new Uint8Array(100 << 20));
          oversized = await Promise.race([
            status,
            new Promise<string>((r) => setTimeout(() => r("(no error)"), 20_000)),
          ]);
          await raw.nc.close().catch(() => {});
        }
      }
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      assert.equal(oversized, "disconnect", "the server cuts off a client that sends past its limit");
      assert.equal(await sha(`${run}/${FINAL}`), await sha(`${dir}/inproc/${FINAL}`), "forgeries changed the run");

      const lines = await metrics(run);
      assert.deepEqual(lines.map((x) => x.episodes), [4, 4, 4]);
      const total = (k: string) => lines.reduce((n, x) => n + (x[k] ?? 0), 0);
      for (const reason of ["token_ids", "logprobs", "reward", "version", "size", "worker", "id"]) {
        assert.ok(total(`rejected_${reason}`) >= 1, `rejected_${reason}: ${JSON.stringify(lines)}`);
      }
      // 5 forgeries a step; those that came after the last step's groups are counted in no step.
      assert.ok(total("rejected") >= 10, `${total("rejected")} refused`);
      assert.ok(total("duplicates_dropped") >= 1, "the replay");
      const stored = (await observer.jsm.streams.info(TRAJECTORIES)).state.bytes;
      assert.ok(stored < 20 << 20, `the 100 MB message is not in the stream (${stored} bytes)`);
      assert.ok(lines.every((x) => typeof x.rejected === "number"));
      const err = learner.err();
      for (const reason of ["token_ids", "logprobs", "reward", "version", "size", "worker", "id"]) {
        assert.equal(err.split(`(${reason}: `).length - 1, 1, `${reason} named once on stderr:\n${err}`);
      }
      assert.match(err, /Dropped worker m after 8 refused messages/);
      assert.doesNotMatch(err, /Dropped worker a/);

      // No secret in the run folder (metrics, logs, config, checkpoints, report) or in anything printed.
      const secrets = await Promise.all(["learner", "worker-a", "worker-m"].map(async (f) => {
        return (await readCredentials(file(f))).seed;
      }));
      const keys = [await Deno.readTextFile(`${data}/auth/server.key`), await Deno.readTextFile(`${data}/auth/ca.key`)]
        .map((k) => k.split("\n")[1]);
      const printed = learner.output() + worker.output();
      for (const secret of [...secrets, ...keys]) {
        assert.ok(!printed.includes(secret), "a secret was printed");
        for await (const f of walk(run)) {
          const bytes = await Deno.readFile(f);
          assert.ok(!dec.decode(bytes).includes(secret), `${f} holds a secret`);
        }
      }
    } finally {
      clearTimeout(watchdog);
      await Promise.all([m.close(), a.close(), observer.close()]);
      await end(learner);
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* walk(path);
    else if (e.isFile) yield path;
  }
}
