/**
 * The actor's loss inside the LM head pass: for each chunk of rows the head records logp and entropy, then the
 * configured policy loss's kernel (its GPU side, named by src/rl/policy_losses.ts; vanilla's is
 * src/ops/policy_loss.ts) turns them into dlogp and dentropy and per-token statistics before the head's backward
 * consumes the chunk. The formula it computes is policyObjective (src/rl/policy_loss.ts).
 */
import type { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { empty, type Tensor } from "../gpu/tensor.ts";
import type { HeadChunk, HeadChunkGrad, HeadGrad } from "../model/head.ts";
import { POLICY_STATS } from "../ops/policy_loss.ts";
import type { ResolvedPolicyLoss } from "../rl/policy_loss.ts";

export { uploadPolicyInputs } from "../ops/policy_loss.ts";

/** The head callback of one packed batch and the whole-batch tensors it writes. */
export interface PolicyLossHead {
  /** Pass as the model's `lossGrad`. */
  grad: HeadGrad;
  /** [T] f32 gradients, read by the head's backward chunk by chunk. */
  dlogp: Tensor;
  /** [T] f32 gradients with respect to the entropy, read as dlogp is. */
  dentropy: Tensor;
  /** [T, 8] f32 statistics (POLICY_STATS): read back once per step and sum with policyMetrics. */
  stats: Tensor;
  /** Releases dlogp, dentropy and stats (not the inputs). Call after the batch that used them was submitted. */
  release(): void;
}

/**
 * The model's HeadGrad for a packed batch of T tokens: each chunk [start, start + count) gets views of the
 * whole-batch tensors at `start` (chunk starts are multiples of 64 rows, so the views meet the 256-byte alignment).
 *
 * @example
 * ```ts
 * const inputs = uploadPolicyInputs(gpu, { oldLogp, refLogp, advantages, weights });
 * const head = policyLossHead(gpu, inputs, loss); // loss: the step's resolvePolicyLoss(...)
 * model.forward(batch, packed, { grads, lossGrad: head.grad });
 * const [stats] = await batch.read([head.stats]); // the step's one readback
 * policyMetrics(stats, loss.settings);
 * ```
 */
export function policyLossHead(gpu: Gpu, inputs: Tensor, loss: ResolvedPolicyLoss): PolicyLossHead {
  if (inputs.shape.length !== 2 || inputs.shape[1] !== 4) {
    throw new TypeError(`Policy inputs must be [T, 4] (uploadPolicyInputs), got [${inputs.shape}]`);
  }
  const T = inputs.shape[0];
  const S = POLICY_STATS.length;
  const k = loss.kernel, kernel = loss.surrogate.kernel;
  const dlogp = empty(gpu, [T], "f32", "dlogp");
  const dentropy = empty(gpu, [T], "f32", "dentropy");
  const stats = empty(gpu, [T, S], "f32", "policy stats");
  const grad = (batch: Batch, chunk: HeadChunk): HeadChunkGrad => {
    const { start, count } = chunk;
    if (start + count > T) {
      throw new RangeError(`Head chunk [${start}, ${start + count}) is outside the policy inputs of ${T} tokens`);
    }
    const out = { dlogp: dlogp.view(start, [count]), dentropy: dentropy.view(start, [count]) };
    kernel(batch, {
      logp: chunk.logp,
      entropy: chunk.entropy,
      inputs: inputs.view(start * 4, [count, 4]),
      ...out,
      stats: stats.view(start * S, [count, S]),
    }, k);
    return out;
  };
  return {
    grad,
    dlogp,
    dentropy,
    stats,
    release() {
      for (const t of [dlogp, dentropy, stats]) t.release();
    },
  };
}
