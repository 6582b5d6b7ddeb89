// One hostile worker beside an honest one (issue 59), on a cluster with credentials and TLS: while a learner and
// worker b train 3 steps, worker m (credentials of its own) keeps sending the two requests its credentials allow with
// the reply subject set to b's subject (12 `$JS.API.INFO` at a time) and to the version key's subject (a
// `$JS.API.STREAM.MSG.GET.KV_crucible`), and sends junk under the message ids of every group of steps 1-3 as the
// learner names its prompts (RUN-sSTEP-gGROUP-r0, the run id read from the key-value store) and answers onto its own
// subject. Before the fix this blamed and dropped b, replaced the version key (b exited) and had b's groups dropped as
// duplicates: the run stalled at step 1. Now the run ends with b's groups trained on, bit for bit the in-process run
// at rollout.max_staleness=0, and m named and dropped.
import assert from "node:assert/strict";
import { prepareAuth } from "../../src/cluster/auth.ts";
import { readCredentials } from "../../src/cluster/credentials.ts";
import { connectCluster } from "../../src/cluster/nats.ts";
import { startNatsServer } from "../../src/cluster/server.ts";
import { localNames } from "../../src/cluster/tls.ts";
import { noGpu } from "../no_gpu.ts";
import { end, sha, spawnCli } from "../subprocess.ts";
import { learnerArgs, metrics, noNats } from "./helpers.ts";

const FINAL = "checkpoints/final/model.safetensors";
const enc = new TextEncoder();

Deno.test({
  name:
    "cluster: a hostile worker (answers on others' subjects, pre-empted ids) beside an honest one is named; b trains",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const inproc = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", `${dir}/inproc`]);
    assert.equal((await inproc.done).code, 0, inproc.output());

    const data = `${dir}/nats`;
    const auth = await prepareAuth(data, { workers: ["b", "m"], tlsNames: localNames("0.0.0.0") });
    const server = await startNatsServer({ dataDir: data, host: "0.0.0.0", port: 0, auth });
    const url = server.url.replace("0.0.0.0", "127.0.0.1");
    const file = (name: string) => `${data}/creds/${name}.creds`;
    const m = await connectCluster(url, { creds: await readCredentials(file("worker-m")) });
    const run = `${dir}/cluster`;
    const learner = spawnCli([
      "train",
      ...await learnerArgs(dir),
      "--run-dir",
      run,
      "--cluster",
      url,
      "--creds",
      file("learner"),
    ]);
    const worker = spawnCli(["worker", "--cluster", url, "--creds", file("worker-b")]);
    let finished = false;
    learner.done.then(() => (finished = true));
    // A stalled run (what this did before the fix) fails with its output instead of hanging.
    const watchdog = setTimeout(() => learner.child.kill("SIGKILL"), 240_000);
    let junked = "", attacks = 0;
    try {
      while (!finished) {
        for (let i = 0; i < 12; i++) {
          m.nc.publish("$JS.API.INFO", new Uint8Array(0), { reply: "crucible.trajectories.b" });
        }
        const get = enc.encode(JSON.stringify({ last_by_subj: "$KV.crucible.run" }));
        m.nc.publish("$JS.API.STREAM.MSG.GET.KV_crucible", get, { reply: "$KV.crucible.version" });
        m.nc.publish("$JS.API.INFO", new Uint8Array(0), { reply: "crucible.trajectories.m" });
        const runId = await m.kv.get("run").then((e) => e && JSON.parse(e.string()).id as string, () => null);
        if (runId && runId !== junked) {
          for (let step = 1; step <= 3; step++) {
            for (const group of [0, 1]) {
              const msgID = `${runId}-s${step}-g${group}-r0`;
              await m.js.publish("crucible.trajectories.m", enc.encode(`{"junk":"${msgID}"}`), { msgID });
            }
          }
          junked = runId;
        }
        attacks++;
        await new Promise((r) => setTimeout(r, 300));
      }
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output() + worker.output());
      assert.ok(junked !== "" && attacks >= 10, `the attacks ran (${attacks} rounds)`);
      const lines = await metrics(run);
      assert.deepEqual(lines.map((x) => x.episodes), [4, 4, 4]);
      for (const x of lines) {
        assert.equal(x.workers, 1, JSON.stringify(x));
        assert.ok(x.worker_b_episodes_per_s > 0 && x.worker_m_episodes_per_s === undefined, JSON.stringify(x));
      }
      assert.equal(await sha(`${run}/${FINAL}`), await sha(`${dir}/inproc/${FINAL}`), "m changed what trained");
      const err = learner.err();
      assert.match(err, /Dropped worker m after \d+ refused messages/);
      assert.doesNotMatch(err, /Dropped worker b|on worker b's subject/);
      // b never saw its version key replaced, nor its groups taken for another's.
      assert.doesNotMatch(worker.output(), /ignoring the cluster's|never sent/);
    } finally {
      clearTimeout(watchdog);
      await m.close();
      await end(learner);
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});
