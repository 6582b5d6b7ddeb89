// A learner and rollout workers over a real nats-server on loopback: two workers train 3 steps of the smoke model
// to the same parameters as the in-process run, bit for bit (rollout.max_staleness=0); a worker SIGKILLed in the
// middle of a group has its prompt replayed by another, and the run still takes exactly the batch size per step,
// counts nothing twice and ends with the same parameters; a server that stalls as the learner starts is waited for.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { end, sha, spawnCli } from "../subprocess.ts";
import { learnerArgs, metrics, natsServer, noNats } from "./helpers.ts";

const FINAL = "checkpoints/final/model.safetensors";

async function inProcess(dir: string): Promise<string> {
  const run = `${dir}/inproc`;
  const p = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", run]);
  const s = await p.done;
  assert.equal(s.code, 0, p.output());
  return await sha(`${run}/${FINAL}`);
}

Deno.test({
  name: "cluster: a learner and two workers train 3 steps to the in-process run's parameters, bit for bit",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const want = await inProcess(dir);
    const server = await natsServer(dir);
    const workers = ["a", "b"].map((name) => spawnCli(["worker", "--cluster", server.url, "--name", name]));
    try {
      const run = `${dir}/cluster`;
      const learner = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", run, "--cluster", server.url]);
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      assert.equal(await sha(`${run}/${FINAL}`), want, "cluster and in-process parameters differ");
      const m = await metrics(run);
      assert.deepEqual(m.map((x) => x.episodes), [4, 4, 4]);
      assert.deepEqual(m.map((x) => x.staleness_0), [4, 4, 4]);
      assert.deepEqual(m.map((x) => x.stale_dropped), [0, 0, 0]);
      assert.ok(m.every((x) => x.workers >= 1 && x.cluster_wait_s > 0), JSON.stringify(m));
      const names = new Set(m.flatMap((x) => Object.keys(x).filter((k) => k.endsWith("_episodes_per_s"))));
      assert.ok(names.size >= 1, "per-worker episodes/s are reported");
    } finally {
      await Promise.all(workers.map(end));
      await server.stop();
    }
    for (const w of workers) assert.match(w.output(), /stopped after \d+ groups/);
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster: a worker SIGKILLed mid-group has its prompt replayed; exact batch, nothing counted twice",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const want = await inProcess(dir);
    const server = await natsServer(dir);
    // Worker a alone takes step 1's groups and kills itself (SIGKILL) after the group's first episode.
    const a = spawnCli(["worker", "--cluster", server.url, "--name", "a"], {
      env: { CRUCIBLE_KILL_AT: "worker mid-group" },
    });
    let b;
    try {
      const run = `${dir}/cluster`;
      const learner = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", run, "--cluster", server.url]);
      // A learner that ends before worker a dies would leave the test waiting on a forever: fail with its output.
      const first = await Promise.race([a.done.then(() => "worker"), learner.done.then(() => "learner")]);
      assert.equal(first, "worker", `the learner ended before worker a took a group:\n${learner.output()}`);
      const killed = await a.done;
      assert.equal(killed.signal, "SIGKILL", a.output());
      b = spawnCli(["worker", "--cluster", server.url, "--name", "b"]);
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      const m = await metrics(run);
      assert.deepEqual(m.map((x) => x.episodes), [4, 4, 4], "exactly train_batch_size × n per step");
      // Worker a held one or both of step 1's groups (it takes what the queue holds) when it died.
      assert.ok([1, 2].includes(m[0].prompts_replayed), "the killed worker's prompts, replayed");
      assert.deepEqual(m.slice(1).map((x) => x.prompts_replayed), [0, 0]);
      assert.ok(m.every((x) => x.duplicates_dropped === 0 && x.worker_a_episodes_per_s === undefined));
      const episodes = (await Deno.readTextFile(`${run}/rollouts.jsonl`)).trim().split("\n")
        .map((l) => JSON.parse(l)).filter((e) => e.phase === "rl");
      assert.equal(episodes.length, 12);
      assert.equal(new Set(episodes.map((e) => `${e.step}-${e.group}-${e.conversation}`)).size, 12);
      // The replay samples the same seeds on the same version: the run is still the in-process one.
      assert.equal(await sha(`${run}/${FINAL}`), want);
    } finally {
      if (b) await end(b);
      await end(a);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster: max_staleness=1 with TIS plays ahead within the bound, exact batches, TIS metrics reported",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const server = await natsServer(dir);
    const workers = ["a", "b"].map((name) => spawnCli(["worker", "--cluster", server.url, "--name", name]));
    try {
      const run = `${dir}/cluster`;
      const extra = ["rollout.max_staleness=1", "actor.recompute_old_logprob=true", "actor.tis_cap=2"];
      const learner = spawnCli(["train", ...await learnerArgs(dir, extra), "--run-dir", run, "--cluster", server.url]);
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      const m = await metrics(run);
      assert.deepEqual(m.map((x) => x.episodes), [4, 4, 4]);
      for (const x of m) {
        assert.equal((x.staleness_0 ?? 0) + (x.staleness_1 ?? 0), 4, JSON.stringify(x));
        assert.equal(x.stale_dropped, 0);
        assert.ok(x.tis_clipfrac >= 0 && x.tis_clipfrac <= 1 && x.tis_weight_mean > 0 && x.tis_weight_mean <= 2);
      }
      assert.equal(m[0].staleness_0, 4, "step 1 plays version 0, the only one");
    } finally {
      await Promise.all(workers.map(end));
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster: the NATS server restarted mid-run; learner and worker reconnect and end as the in-process run",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const want = await inProcess(dir);
    let server = await natsServer(dir);
    const port = Number(new URL(server.url.replace("nats:", "http:")).port);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "a"]);
    try {
      const run = `${dir}/cluster`;
      const learner = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", run, "--cluster", server.url]);
      // After step 1 is logged: stop the server and start it again on its port and data directory.
      for (let i = 0; i < 1200; i++) {
        const logged = await Deno.readTextFile(`${run}/metrics.jsonl`).catch(() => "");
        if (logged.includes('"step":1')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await server.stop();
      await new Promise((r) => setTimeout(r, 1000));
      server = await natsServer(dir, { port });
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      const m = await metrics(run);
      assert.deepEqual(m.map((x) => x.episodes), [4, 4, 4]);
      assert.equal(await sha(`${run}/${FINAL}`), want);
    } finally {
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster: a learner killed mid-run and resumed continues from its checkpoint to the in-process parameters",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const want = await inProcess(dir);
    const server = await natsServer(dir);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "a"]);
    try {
      const run = `${dir}/cluster`;
      const args = ["train", ...await learnerArgs(dir, ["trainer.save_freq=1"]), "--run-dir", run];
      const killed = spawnCli([...args, "--cluster", server.url], { env: { CRUCIBLE_KILL_AT: "rl update 2" } });
      assert.equal((await killed.done).signal, "SIGKILL", killed.output());
      const resumed = spawnCli(["train", "--resume", run, "--cluster", server.url]);
      const s = await resumed.done;
      assert.equal(s.code, 0, resumed.output());
      const m = await metrics(run);
      assert.deepEqual(m.map((x) => [x.step, x.episodes]), [[1, 4], [2, 4], [3, 4]]);
      assert.equal(await sha(`${run}/${FINAL}`), want);
    } finally {
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "cluster: a server that stalls for 8 s as the learner prepares its streams is waited for, not a timeout",
  ignore: noGpu || noNats,
  async fn() {
    // As a loaded machine can (this ended the run with "error: timeout" before its first step): the server is
    // stopped (SIGSTOP) once the learner has its model, just before it makes the streams, for longer than a
    // request's deadline (3 s) and its fallback together.
    const dir = await Deno.makeTempDir();
    const server = await natsServer(dir);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "a"]);
    try {
      const run = `${dir}/cluster`;
      const args = await learnerArgs(dir, ["trainer.total_steps=1"]);
      const learner = spawnCli(["train", ...args, "--run-dir", run, "--cluster", server.url]);
      while (!learner.output().includes("Run folder")) {
        assert.equal(await Promise.race([learner.done.then(() => "ended"), delay(5)]), undefined, learner.output());
      }
      Deno.kill(server.pid, "SIGSTOP");
      await delay(8000);
      Deno.kill(server.pid, "SIGCONT");
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      assert.deepEqual((await metrics(run)).map((x) => x.episodes), [4]);
    } finally {
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});

function delay(ms: number): Promise<undefined> {
  return new Promise((r) => setTimeout(() => r(undefined), ms));
}
