// data.synthetic_prompts under --cluster: each worker's embedded server serves the same worlds as the learner's would,
// so a learner and a worker train the smoke model to the in-process run's parameters, bit for bit, and the steps
// log the numbers of both kinds of prompt.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { end, sha, spawnCli } from "../subprocess.ts";
import { learnerArgs, metrics, natsServer, noNats } from "./helpers.ts";

const FINAL = "checkpoints/final/model.safetensors";
const ON = ["data.synthetic_prompts.share=0.5"];

Deno.test({
  name: "cluster: synthetic prompts train to the in-process run's parameters, bit for bit, with metrics by kind",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const inproc = spawnCli(["train", ...await learnerArgs(dir, ON), "--run-dir", `${dir}/inproc`]);
    assert.equal((await inproc.done).code, 0, inproc.output());
    const server = await natsServer(dir);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "a"]);
    try {
      const run = `${dir}/cluster`;
      const learner = spawnCli(["train", ...await learnerArgs(dir, ON), "--run-dir", run, "--cluster", server.url]);
      assert.equal((await learner.done).code, 0, learner.output());
      assert.equal(await sha(`${run}/${FINAL}`), await sha(`${dir}/inproc/${FINAL}`));
      const m = await metrics(run);
      assert.equal(m.length, 3);
      for (const x of m) {
        assert.equal(typeof x.split_success_rate, "number", JSON.stringify(x));
        assert.equal(typeof x.synthetic_success_rate, "number", JSON.stringify(x));
      }
    } finally {
      await end(worker);
      await server.stop();
    }
    await Deno.remove(dir, { recursive: true });
  },
});
