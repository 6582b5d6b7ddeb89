// A LoRA run over a real nats-server on loopback: each policy version is the adapter alone (a few KB here, against
// the model's full parameters), the worker applies it onto the base it loaded itself, and the learner and one worker
// train 3 steps to the in-process run's adapter, bit for bit (rollout.max_staleness=0).
import assert from "node:assert/strict";
import { loadSafetensors } from "../../src/model/safetensors.ts";
import { noGpu } from "../no_gpu.ts";
import { end, sha, spawnCli } from "../subprocess.ts";
import { learnerArgs, metrics, natsServer, noNats } from "./helpers.ts";

const ADAPTER = "checkpoints/final/adapter_model.safetensors";
const LORA = ["model.lora_rank=4", "model.lora_alpha=8"];

Deno.test({
  name: "cluster: a LoRA run publishes only its adapter and trains to the in-process adapter, bit for bit",
  ignore: noGpu || noNats,
  async fn() {
    const dir = await Deno.makeTempDir();
    const inproc = `${dir}/inproc`;
    const p = spawnCli(["train", ...await learnerArgs(dir, LORA), "--run-dir", inproc]);
    assert.equal((await p.done).code, 0, p.output());
    const server = await natsServer(dir);
    const worker = spawnCli(["worker", "--cluster", server.url, "--name", "a"]);
    try {
      const run = `${dir}/cluster`;
      const learner = spawnCli(["train", ...await learnerArgs(dir, LORA), "--run-dir", run, "--cluster", server.url]);
      const s = await learner.done;
      assert.equal(s.code, 0, learner.output());
      assert.equal(await sha(`${run}/${ADAPTER}`), await sha(`${inproc}/${ADAPTER}`), "cluster and in-process differ");
      const m = await metrics(run);
      assert.deepEqual(m.map((x) => x.episodes), [4, 4, 4]);
      // A version is the adapter's A and B as f32 safetensors: its bytes, a header, nothing of the base.
      const adapter = await loadSafetensors(`${run}/${ADAPTER}`);
      const adapterBytes = [...adapter.values()].reduce((n, t) => n + 4 * t.data.length, 0);
      for (const x of m) {
        assert.ok(
          x.cluster_version_bytes > adapterBytes && x.cluster_version_bytes < adapterBytes + 8192,
          `version of ${x.cluster_version_bytes} bytes for an adapter of ${adapterBytes}`,
        );
      }
    } finally {
      await end(worker);
      await server.stop();
    }
    assert.match(worker.output(), /stopped after \d+ groups/);
    await Deno.remove(dir, { recursive: true });
  },
});
