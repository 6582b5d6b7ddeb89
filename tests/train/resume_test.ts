// A run killed and resumed gives bit-identical parameters to one that was never interrupted, whether it stops
// during the supervised warm start or during RL (prompts drawn by signal sampling, whose counts the checkpoint
// keeps); and the run folder holds what it should.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { runTraining } from "../../src/train/run.ts";
import { noGpu } from "../no_gpu.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../bench/smoke_run.ts";
import type { Reporter } from "../../src/train/types.ts";

const QUIET: Reporter = { bar: () => ({ tick() {}, done() {} }), line() {} };

async function config(dir: string) {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  return resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    `model.tiny=${dir}/tiny.yaml`,
    ...SMOKE_RUN,
    "data.prompt_file=null",
    // Signal sampling keeps per-category counts in the trainer state: the resumed run must draw the same prompts.
    "data.prompt_sampling.type=signal",
    "actor.lr=0.01",
    "actor.use_kl_loss=true",
    "actor.kl_loss_coef=0.01",
    "sft.epochs=0.02",
    "sft.batch_tokens=2048",
    "sft.lr=0.01",
    "trainer.total_steps=2",
    "trainer.test_freq=1",
  ]);
}

/** Stops when `file` in the run folder has a line containing `marker`. */
function stopAfter(runDir: string, marker: string) {
  return () => {
    try {
      return Deno.readTextFileSync(`${runDir}/metrics.jsonl`).includes(marker);
    } catch {
      return false;
    }
  };
}

async function finalWeights(runDir: string): Promise<Map<string, Float32Array>> {
  return (await loadModelDir(`${runDir}/checkpoints/final`)).tensors;
}

Deno.test({
  name: "kill and resume (during SFT and during RL) gives bit-identical parameters",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir);
    const straight = `${dir}/straight`;
    const a = await runTraining({
      config: c,
      runDir: straight,
      resume: false,
      reporter: QUIET,
      stopRequested: () => false,
    });
    assert.equal(a.interrupted, false);
    for (const f of ["config.yaml", "metrics.jsonl", "rollouts.jsonl", "evals.jsonl", "checkpoints/latest"]) {
      await Deno.stat(`${straight}/${f}`);
    }
    const evals = Deno.readTextFileSync(`${straight}/evals.jsonl`).trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(evals.map((e) => e.phase), ["sft", "rl", "final"]);
    const want = await finalWeights(straight);
    for (const [marker, name] of [['"phase":"sft"', "sft"], ['"phase":"rl"', "rl"]]) {
      const run = `${dir}/${name}`;
      const b = await runTraining({
        config: c,
        runDir: run,
        resume: false,
        reporter: QUIET,
        stopRequested: stopAfter(run, marker),
      });
      assert.equal(b.interrupted, true, name);
      const r = await runTraining({
        config: c,
        runDir: run,
        resume: true,
        reporter: QUIET,
        stopRequested: () => false,
      });
      assert.equal(r.interrupted, false);
      const got = await finalWeights(run);
      for (const [k, v] of want) {
        // Element by element: deepEqual's diff of two long arrays that differ takes minutes to print.
        const g = got.get(k)!;
        const at = v.findIndex((x, i) => !Object.is(x, g[i]));
        assert.ok(g.length === v.length && at < 0, `${name}: ${k} differs at ${at}: ${g[at]} vs ${v[at]}`);
      }
    }
  },
});
