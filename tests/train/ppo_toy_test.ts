// PPO with a critic (GAE) on a two-armed bandit in a one-turn environment: the tiny policy learns to pull the
// better arm within a few dozen steps, through the real rollout, critic, GAE, value loss and policy loss.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { envClient } from "../../tasks/mod.ts";
import { Generator } from "../../src/model/generate.ts";
import { initParams } from "../../src/model/init.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { Critic } from "../../src/update/critic.ts";
import { createLearner } from "../../src/update/learner.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { rlStep } from "../../src/train/rl_step.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { oneRoundServer, oneRoundTask } from "./one_round.ts";
import { stepMetrics } from "../../src/train/step_metrics.ts";
import { stalenessRule } from "../../src/rl/off_policy.ts";

const ARMS: Record<string, number> = { left: 1, right: 0.3 };

/** One round: "left" pays 1, "right" 0.3, anything else 0. */
const bandit = () => oneRoundServer("Pull an arm.", (a) => ARMS[a] ?? 0);
const BANDIT = oneRoundTask("bandit", "Pull an arm.");

for (const share of [false, true]) {
  Deno.test({
    name: `PPO with a critic${share ? " sharing the actor's backbone" : ""} learns to pull the better arm`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      const server = bandit();
      const tok = wordTokenizer(["left", "right", "up", "down", "Pull an arm.", "OK.", "ok"]);
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
      const tensors = initParams(config, 5, { std: 0.02 });
      const learner = createLearner(gpu, { config, tensors });
      const opt = new AdamW(gpu, learner.model.weights, learner.grads, {
        beta1: 0.9,
        beta2: 0.99,
        eps: 1e-8,
        weightDecay: 0,
        maxGradNorm: 1,
      });
      const run = resolveConfig({ text: "", name: "bandit" }, [
        "algorithm.adv_estimator=gae",
        "rollout.n=16",
        "rollout.max_tokens_per_turn=1",
        "rollout.max_prompt_length=64",
        "rollout.max_response_length=16",
        "algorithm.rounds_ctrl.type=fixed",
        "algorithm.rounds_ctrl.rounds=[1]",
        "actor.use_kl_loss=false",
        "actor.entropy_coeff=0",
        "actor.ppo_mini_batch_size=2",
        "critic.lr=0.02",
        `critic.share_backbone=${share}`,
        "critic.warmup_steps=2",
      ]);
      const critic = new Critic(learner, run, tensors);
      const client = envClient("textcraft", { urls: [server.url] });
      const generator = new Generator(learner.model, { slots: 64, maxLen: 96, blockSteps: 2 });
      const ctx = {
        config: run,
        rollout: { generator, tokenizer: tok, client, task: BANDIT },
        learner,
        critic,
        opt,
        stopIds: [tok.id("<|im_end|>")],
        lr: () => 0.02,
        staleness: stalenessRule(0),
      };
      const rewards: number[] = [], valueLoss: number[] = [];
      for (let step = 1; step <= 24; step++) {
        const r = await rlStep(ctx, step, [0, 1]);
        const m = stepMetrics(r);
        rewards.push(m.reward_mean);
        valueLoss.push(m.value_loss);
        if (step <= 2) assert.equal(r.updates.length, 0, "the actor waits out the critic's warm-up");
      }
      client.close();
      await server.close();
      critic.release();
      const early = (rewards[0] + rewards[1] + rewards[2]) / 3, late = (rewards[21] + rewards[22] + rewards[23]) / 3;
      const show = rewards.map((x) => x.toFixed(2)).join(" ");
      assert.ok(late >= 0.85 && late >= early + 0.4, `the better arm should win: ${show}`);
      assert.ok(valueLoss.every(Number.isFinite));
    },
  });
}
