// A short seeded run of the main job (a small model, a few SFT and RL steps) writes the same metrics, evaluations
// and episodes, bit for bit apart from timings, as the run recorded in tests/fixtures/golden_run/ when the trainer
// was restructured (issue 12). A change that alters what training computes shows up here; when it is meant to,
// regenerate the files with `deno test -A tests/train/golden_run_test.ts -- --update` and say why in the commit.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FIXTURES = `${ROOT}tests/fixtures/golden_run`;
const TINY = "hidden_size: 32\nintermediate_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 2\n" +
  "num_key_value_heads: 1\nrope_theta: 10000\nrms_norm_eps: 1.0e-6\ntie_word_embeddings: true\n" +
  "max_position_embeddings: 2048\ninit_std: 0.05\nseed: 3\n";

// The shipped TextCraft config as it was when the record was made: pinned here, so that new defaults in
// configs/textcraft.yaml do not move the record.
const CONFIG = `task: textcraft
task_options: {oracle_format: recipe, rename_items: 0.5, drop_distractors: 0.5}
data:
  train_batch_size: 2
  prompt: {user: "Craft the goal. Reply with one action: get, craft or inventory.", assistant: "OK."}
rollout: {n: 2, temperature: 1.0, max_tokens_per_turn: 8, max_prompt_length: 1200, max_response_length: 128,
  slots: 64, block_steps: 8, kv_cache: f32}
algorithm: {adv_estimator: grpo, rounds_ctrl: {type: fixed, rounds: [3]}}
actor: {lr: 1.0e-3, ppo_mini_batch_size: 8, ppo_micro_batch_tokens: 8192, entropy_coeff: 0.01, use_kl_loss: true,
  recompute_old_logprob: false, weight_decay: 0.0}
sft: {enabled: true, data: oracle, context_loss_weight: 0.5, epochs: 0.05, lr: 3.0e-3, batch_tokens: 1024,
  lr_schedule: {type: cosine, warmup_steps: 20, min_lr_ratio: 0.1}, weight_decay: 0.0}
trainer: {total_steps: 2, save_freq: 1, test_freq: 1, seed: 1, eval_temperature: 0, eval_limit: 3}
`;

/** A log file's lines without their timing fields. */
function withoutTimings(text: string): string {
  return text.replace(/"(time|tokens_per_s|[a-z_]*_s)":[^,}]*,?/g, "");
}

Deno.test({
  name: "a short seeded run writes the recorded metrics, evaluations and episodes (timings aside)",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, TINY);
    await Deno.writeTextFile(`${dir}/golden.yaml`, CONFIG);
    const r = await runCli(["train", `${dir}/golden.yaml`, "--run-dir", `${dir}/run`, `model.tiny=${dir}/tiny.yaml`]);
    assert.equal(r.code, 0, r.err);
    const update = Deno.args.includes("--update");
    for (const f of ["metrics", "evals", "rollouts"]) {
      const got = withoutTimings(await Deno.readTextFile(`${dir}/run/${f}.jsonl`));
      if (update) {
        await Deno.writeTextFile(`${FIXTURES}/${f}.jsonl`, got);
        continue;
      }
      // Every recorded field must come out the same (fields added since may sit beside them).
      const lines = (text: string) => text.trim().split("\n").map((l) => JSON.parse(l.replace(/,}$/, "}")));
      const want = lines(await Deno.readTextFile(`${FIXTURES}/${f}.jsonl`)), have = lines(got);
      assert.equal(have.length, want.length, `${f}.jsonl has ${have.length} lines, the record ${want.length}`);
      want.forEach((w, i) => {
        for (const key of Object.keys(w)) {
          assert.deepEqual(have[i][key], w[key], `${f}.jsonl line ${i + 1}, ${key}`);
        }
      });
    }
  },
});
