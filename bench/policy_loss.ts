/**
 * The fused policy-loss case: dlogp, dentropy and per-token statistics of a micro-batch of 8192 tokens (the
 * trainer's default micro-batch), under the config's default loss settings (dual-clipped ratio, low-variance KL at
 * 1e-3), resolved as the RL step resolves them.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { empty } from "../src/gpu/tensor.ts";
import { POLICY_STATS, policyLossForward, uploadPolicyInputs } from "../src/ops/policy_loss.ts";
import { RunConfig } from "../src/config/schema.ts";
import { actorLoss } from "../src/train/rl_step.ts";
import { filled, pattern, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const T = 8192;

function cases(_gpu: Gpu): BenchCase[] {
  const S = POLICY_STATS.length, settings = actorLoss(RunConfig.parse({}), true).kernel;
  return [{
    kernel: "policy_loss",
    variant: "default",
    shape: `T${T}`,
    // logp, entropy and the [T, 4] inputs read; dlogp, dentropy and [T, S] statistics written.
    bytes: T * 4 * (2 + 4 + 2 + S),
    setup(gpu) {
      const logp = filled(gpu, [T], "f32", 2), entropy = filled(gpu, [T], "f32", 1);
      const inputs = uploadPolicyInputs(gpu, {
        oldLogp: pattern(T, 2, 3),
        refLogp: pattern(T, 2, 5),
        advantages: pattern(T, 2, 7),
        weights: new Float32Array(T).fill(1 / T),
      });
      const out = { dlogp: empty(gpu, [T]), dentropy: empty(gpu, [T]), stats: empty(gpu, [T, S]) };
      return {
        record: (batch) => policyLossForward(batch, { logp, entropy, inputs, ...out }, settings),
        release: () => releaseAll([logp, entropy, inputs, ...Object.values(out)]),
      };
    },
  }];
}

registerBench("policy_loss", cases);
