/**
 * The actor's per-token loss on the GPU, fused into the LM head pass: for each chunk of rows the head records
 * logp and entropy, then this kernel turns them into dlogp and dentropy (and per-token statistics) before the
 * head's backward consumes the chunk. The CPU definition it matches is policyObjective (policy_objective.ts).
 *
 * The host uploads one [T, 4] tensor per packed batch (old logp, reference logp, advantage, aggregation weight);
 * the weights are the whole mini-batch's (aggregationWeights), so micro-batch gradients add up to the mini-batch's.
 */
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { empty, fromHost, type Tensor } from "../gpu/tensor.ts";
import { kernel } from "../gpu/pipeline.ts";
import { uniforms } from "../gpu/uniforms.ts";
import type { HeadChunk, HeadChunkGrad, HeadGrad } from "../model/head.ts";
import { klCode } from "./losses.ts";
import { POLICY_STATS, type PolicyLossSettings, policyLossSettings } from "./policy_objective.ts";

const PARAMS = uniforms(
  [
    ["N", "u32"],
    ["klKind", "u32"],
    ["straightThrough", "u32"],
    ["clipLow", "f32"],
    ["clipHigh", "f32"],
    ["clipC", "f32"],
    ["klCoef", "f32"],
    ["entropyCoef", "f32"],
  ] as const,
);

const KL_NONE = 4;
const WG = 64;

/** Columns of the per-token inputs tensor [T, 4]. */
export const POLICY_INPUTS = ["oldLogp", "refLogp", "advantage", "weight"] as const;

/** Host arrays of {@linkcode uploadPolicyInputs}, each [T] (a packed batch's tokens end to end). */
export interface PolicyInputArrays {
  oldLogp: ArrayLike<number>;
  /** Omitted without a reference model (klKind "none"): uploaded as zeros. */
  refLogp?: ArrayLike<number>;
  advantages: ArrayLike<number>;
  /** Aggregation weights of the mini-batch, 0 on mask-0 tokens. */
  weights: ArrayLike<number>;
}

/** Interleaves the per-token inputs into [T, 4] f32 and uploads them (one write). */
export function uploadPolicyInputs(gpu: Gpu, a: PolicyInputArrays): Tensor {
  const T = a.weights.length;
  const cols = [a.oldLogp, a.refLogp, a.advantages, a.weights];
  cols.forEach((c, i) => {
    if (c && c.length !== T) throw new TypeError(`Policy input ${POLICY_INPUTS[i]} has ${c.length} tokens, not ${T}`);
  });
  const data = new Float32Array(T * 4);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < 4; i++) data[t * 4 + i] = cols[i]?.[t] ?? 0;
  }
  return fromHost(gpu, data, [T, 4]);
}

/** Tensors of {@linkcode policyLossForward}, all for the same T tokens. */
export interface PolicyLossArgs {
  /** [T] f32, the model's outputs. */
  logp: Tensor;
  entropy: Tensor;
  /** [T, 4] f32 from uploadPolicyInputs. */
  inputs: Tensor;
  /** [T] f32 outputs (written). */
  dlogp: Tensor;
  dentropy: Tensor;
  /** [T, 8] f32 output (written), columns POLICY_STATS. */
  stats: Tensor;
}

/** Records the fused per-token loss: dlogp, dentropy and statistics of T tokens. */
export function policyLossForward(batch: Batch, args: PolicyLossArgs, settings: PolicyLossSettings = {}): void {
  const T = args.logp.size;
  const S = POLICY_STATS.length;
  const widths: [Tensor, number][] = [
    [args.entropy, 1],
    [args.inputs, 4],
    [args.dlogp, 1],
    [args.dentropy, 1],
    [args.stats, S],
  ];
  for (const [t, width] of widths) {
    if (t.size !== T * width) throw new TypeError(`Policy loss tensor [${t.shape}] must hold ${T}·${width} values`);
  }
  const s = policyLossSettings(settings);
  const kl = s.klKind === "none" ? { code: KL_NONE, straightThrough: false } : klCode(s.klKind);
  batch.dispatch({
    kernel: kernel(batch.gpu, "policy_loss_forward", { params: PARAMS }),
    buffers: [args.logp, args.entropy, args.inputs, args.dlogp, args.dentropy, args.stats],
    params: {
      N: T,
      klKind: kl.code,
      straightThrough: kl.straightThrough ? 1 : 0,
      clipLow: s.clipLow,
      clipHigh: s.clipHigh,
      clipC: s.clipC,
      klCoef: s.klCoef,
      entropyCoef: s.entropyCoef,
    },
    grid: foldGrid(batch.gpu, Math.ceil(T / WG)),
  });
}

/** The head callback of one packed batch and the whole-batch tensors it writes. */
export interface PolicyLossHead {
  /** Pass as the model's `lossGrad`. */
  grad: HeadGrad;
  /** [T] f32 gradients, read by the head's backward chunk by chunk. */
  dlogp: Tensor;
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
 * const loss = policyLossHead(gpu, inputs, { klCoef: 1e-3 });
 * model.forward(batch, packed, { grads, lossGrad: loss.grad });
 * const [stats] = await batch.read([loss.stats]); // the step's one readback
 * policyMetrics(stats, { klCoef: 1e-3 });
 * ```
 */
export function policyLossHead(gpu: Gpu, inputs: Tensor, settings: PolicyLossSettings = {}): PolicyLossHead {
  if (inputs.shape.length !== 2 || inputs.shape[1] !== 4) {
    throw new TypeError(`Policy inputs must be [T, 4] (uploadPolicyInputs), got [${inputs.shape}]`);
  }
  const T = inputs.shape[0];
  const S = POLICY_STATS.length;
  policyLossSettings(settings); // fail here, not mid-recording
  const dlogp = empty(gpu, [T], "f32", "dlogp");
  const dentropy = empty(gpu, [T], "f32", "dentropy");
  const stats = empty(gpu, [T, S], "f32", "policy stats");
  const grad = (batch: Batch, chunk: HeadChunk): HeadChunkGrad => {
    const { start, count } = chunk;
    if (start + count > T) {
      throw new RangeError(`Head chunk [${start}, ${start + count}) is outside the policy inputs of ${T} tokens`);
    }
    const out = { dlogp: dlogp.view(start, [count]), dentropy: dentropy.view(start, [count]) };
    policyLossForward(batch, {
      logp: chunk.logp,
      entropy: chunk.entropy,
      inputs: inputs.view(start * 4, [count, 4]),
      ...out,
      stats: stats.view(start * S, [count, S]),
    }, settings);
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
