// Divergence is a stop, not a result (issue 32): a learning rate that blows the weights up stops the run with exit
// code 2 at the step it happened, saves nothing of that step and writes no `final`, at the first step of a phase as
// at its last.
import assert from "node:assert/strict";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../src/bench/smoke_run.ts";
import { noGpu } from "../no_gpu.ts";
import { cli } from "./cli_run.ts";

function budget(dir: string): string[] {
  return [
    `model.tiny=${dir}/tiny.yaml`,
    "model.path=null",
    ...SMOKE_RUN,
    "sft.enabled=false",
    // Rewards are all 0 for the tiny model: the entropy bonus gives the update a gradient.
    "actor.entropy_coeff=0.1",
    "trainer.test_freq=0",
  ];
}

const lines = (path: string) => Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));

Deno.test({
  name: "actor.lr=1e6 exits 2 at its first step, with no final checkpoint; a sane lr runs and logs the weights' norm",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const huge = await cli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/h`,
      ...budget(dir),
      "actor.lr=1e6",
      "trainer.total_steps=3",
    ]);
    assert.equal(huge.code, 2, huge.err);
    assert.match(huge.err, /diverged at RL step 1: one step multiplied the weights' norm by [\d.e+]+/);
    assert.match(huge.err, /actor\.lr=100000\b/);
    await assert.rejects(Deno.stat(`${dir}/h/checkpoints/final`));
    await assert.rejects(Deno.stat(`${dir}/h/checkpoints/rl-step-000001`));
    const sane = await cli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/s`,
      ...budget(dir),
      "actor.lr=0.01",
      "trainer.total_steps=2",
    ]);
    assert.equal(sane.code, 0, sane.err);
    const norms = lines(`${dir}/s/metrics.jsonl`).map((m) => m.weight_norm);
    assert.equal(norms.length, 2);
    assert.ok(norms.every((n) => Number.isFinite(n) && n > 0), `${norms}`);
  },
});
