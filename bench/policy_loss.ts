/**
 * The fused policy-loss case: dlogp, dentropy and per-token statistics of a micro-batch of 8192 tokens (the
 * trainer's default micro-batch), under the default loss settings (dual-clipped ratio, low-variance KL at 1e-3).
 */
import type { Gpu } from "../src/gpu/device.ts";
import { empty } from "../src/gpu/tensor.ts";
import { POLICY_STATS, policyLossForward, uploadPolicyInputs } from "../src/ops/policy_loss.ts";
import { policyKernelSettings } from "../src/rl/policy_loss.ts";
import { filled, pattern, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const T = 8192;

function cases(_gpu: Gpu): BenchCase[] {
  const S = POLICY_STATS.length;
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
        record: (batch) => policyLossForward(batch, { logp, entropy, inputs, ...out }, policyKernelSettings()),
        release: () => releaseAll([logp, entropy, inputs, ...Object.values(out)]),
      };
    },
  }];
}

registerBench("policy_loss", cases);
