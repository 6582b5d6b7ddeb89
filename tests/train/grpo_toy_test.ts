// A few GRPO steps on a tiny model in a toy environment whose best action is known (say "yes") must raise the
// reward measurably: seeded, with a margin, through the real rollout, policy-loss kernel, update and AdamW.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { envClient } from "../../tasks/mod.ts";
import { Generator } from "../../src/model/generate.ts";
import { initParams } from "../../src/model/init.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { createLearner } from "../../src/update/learner.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { rlStep } from "../../src/train/rl_step.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { oneRoundServer, oneRoundTask } from "./one_round.ts";
import { stepMetrics } from "../../src/train/step_metrics.ts";
import { stalenessRule } from "../../src/rl/off_policy.ts";

const WORDS = ["yes", "no", "maybe", "perhaps", "never", "always"];

/** One round: reward 1 when the reply says "yes", else 0. */
const toyServer = () => oneRoundServer("Say the word.", (a) => a === "yes" ? 1 : 0, (r) => r === 1 ? "right" : "wrong");
const TOY = oneRoundTask("toy", "Say the word.");

Deno.test({
  name: "GRPO on a toy environment raises the reward of a tiny model (seeded, with a margin)",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const server = toyServer();
    const tok = wordTokenizer([...WORDS, "Say the word.", "OK.", "right", "wrong"]);
    const config = parseModelConfig({
      model_type: "qwen2",
      vocab_size: tok.vocabSize,
      hidden_size: 32,
      intermediate_size: 64,
      num_hidden_layers: 1,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      tie_word_embeddings: true,
      max_position_embeddings: 256,
      eos_token_id: tok.id("<|im_end|>"),
    });
    const learner = createLearner(gpu, { config, tensors: initParams(config, 3, { std: 0.02 }) });
    const { model, grads } = learner;
    const opt = new AdamW(gpu, model.weights, grads, {
      beta1: 0.9,
      beta2: 0.99,
      eps: 1e-8,
      weightDecay: 0,
      maxGradNorm: 1,
    });
    const run = resolveConfig({ text: "", name: "toy" }, [
      "rollout.n=16",
      "rollout.max_tokens_per_turn=1",
      "rollout.max_prompt_length=64",
      "rollout.max_response_length=16",
      "algorithm.rounds_ctrl.type=fixed",
      "algorithm.rounds_ctrl.rounds=[1]",
      "actor.use_kl_loss=false",
      "actor.entropy_coeff=0",
      "actor.ppo_mini_batch_size=4",
    ]);
    const client = envClient("textcraft", { urls: [server.url] });
    const generator = new Generator(model, { slots: 64, maxLen: 96, blockSteps: 2 });
    const ctx = {
      config: run,
      rollout: { generator, tokenizer: tok, client, task: TOY },
      learner,
      opt,
      stopIds: [tok.id("<|im_end|>")],
      lr: () => 0.02,
      staleness: stalenessRule(0),
    };
    const rewards: number[] = [];
    for (let step = 1; step <= 12; step++) {
      const r = await rlStep(ctx, step, [0, 1, 2, 3]);
      const m = stepMetrics(r);
      rewards.push(m.reward_mean);
      assert.equal(m.env_failures, 0);
    }
    client.close();
    await server.close();
    const early = (rewards[0] + rewards[1]) / 2, late = (rewards[10] + rewards[11]) / 2;
    assert.ok(late >= early + 0.3, `reward should rise by 0.3: ${rewards.map((x) => x.toFixed(2)).join(" ")}`);
  },
});
