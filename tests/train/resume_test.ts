// A run killed and resumed gives bit-identical parameters to one that was never interrupted, whether it stops
// during the supervised warm start or during RL; and the run folder holds what it should.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { type Reporter, runTraining } from "../../src/train/run.ts";
import { noGpu } from "../no_gpu.ts";

const QUIET: Reporter = { bar: () => ({ tick() {}, done() {} }), line() {} };

const TINY = `hidden_size: 16
intermediate_size: 32
num_hidden_layers: 1
num_attention_heads: 2
num_key_value_heads: 1
rope_theta: 10000
rms_norm_eps: 1.0e-6
tie_word_embeddings: true
max_position_embeddings: 2048
init_std: 0.05
seed: 3
`;

async function config(dir: string) {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, TINY);
  return resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    `model.tiny=${dir}/tiny.yaml`,
    "data.train_batch_size=2",
    "data.prompt_file=null",
    "rollout.n=2",
    "rollout.max_tokens_per_turn=6",
    "rollout.max_response_length=96",
    "rollout.max_prompt_length=1200",
    "algorithm.rounds_ctrl.type=fixed",
    "algorithm.rounds_ctrl.rounds=[2]",
    "actor.lr=0.01",
    "actor.use_kl_loss=true",
    "actor.kl_loss_coef=0.01",
    "actor.ppo_mini_batch_size=1",
    "sft.enabled=true",
    "task_options.oracle_format=action",
    "sft.epochs=0.02",
    "sft.batch_tokens=2048",
    "sft.lr=0.01",
    "trainer.total_steps=2",
    "trainer.save_freq=1",
    "trainer.test_freq=1",
    "trainer.eval_limit=2",
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
      for (const [k, v] of want) assert.deepEqual(got.get(k), v, `${name}: ${k}`);
    }
  },
});
