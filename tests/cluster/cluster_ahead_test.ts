// A learner at rollout.max_staleness=1 publishes the next step's prompts ahead; killed (SIGKILL) in step 2 and
// resumed with --cluster, it plays the prompts it had published ahead (kept in the checkpoint's trainer state) rather
// than skipping them: every step trains on the prompts the uninterrupted run draws.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { end, spawnCli } from "../subprocess.ts";
import { learnerArgs, natsServer, noNats } from "./helpers.ts";

/** "step group task" of every RL episode of a run folder, sorted. */
async function prompts(runDir: string): Promise<string[]> {
  return (await Deno.readTextFile(`${runDir}/rollouts.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
    .filter((e) => e.phase === "rl").map((e) => `${e.step} ${e.group} ${e.task}`).sort();
}

Deno.test({
  name: "cluster: a learner at max_staleness=1 killed and resumed plays the prompts it published ahead",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const inproc = `${dir}/inproc`;
    const p = spawnCli(["train", ...await learnerArgs(dir), "--run-dir", inproc]);
    assert.equal((await p.done).code, 0, p.output());
    const want = await prompts(inproc);
    assert.equal(new Set(want.map((x) => x.split(" ")[2])).size > 1, true, "the run draws more than one task");
    const server = await natsServer(dir);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "a"]);
    try {
      const run = `${dir}/cluster`;
      const extra = ["trainer.save_freq=1", "rollout.max_staleness=1"];
      const args = ["train", ...await learnerArgs(dir, extra), "--run-dir", run];
      const killed = spawnCli([...args, "--cluster", server.url], { env: { CRUCIBLE_KILL_AT: "rl update 2" } });
      assert.equal((await killed.done).signal, "SIGKILL", killed.output());
      const state = JSON.parse(await Deno.readTextFile(`${run}/checkpoints/rl-step-000001/trainer_state.json`));
      assert.deepEqual(Object.keys(state.ahead), ["2"], "step 2's prompts, published ahead, are kept");
      const resumed = spawnCli(["train", "--resume", run, "--cluster", server.url]);
      const s = await resumed.done;
      assert.equal(s.code, 0, resumed.output());
      assert.deepEqual(await prompts(run), want);
    } finally {
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});
