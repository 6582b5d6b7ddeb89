/**
 * The actor's per-token loss on the GPU (shaders/policy_loss.wgsl): from each token's logp and entropy and
 * its inputs (old logp, reference logp, advantage, aggregation weight), dlogp, dentropy and per-token statistics.
 * The formula and its CPU definition live in src/rl (surrogate.ts, policy_loss.ts), which resolves the settings
 * this kernel takes as numbers; src/rl/policy_losses.ts names this kernel as the vanilla loss's GPU side, and
 * src/update/policy_head.ts runs a loss's kernel inside the LM head pass.
 *
 * The host uploads one [T, 4] tensor per packed batch; the weights are the whole mini-batch's, so micro-batch
 * gradients add up to the mini-batch's.
 */
import source from "../../shaders/policy_loss.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor } from "../gpu/tensor.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import { uniforms } from "../gpu/uniforms.ts";

const SHADER: Shader = { name: "policy_loss", source };

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

const WG = 64;

/** The kernel's KL codes: 0 k1, 1 abs, 2 k2, 3 k3, and none. */
export const KL_CODES = { k1: 0, abs: 1, k2: 2, k3: 3, none: 4 } as const;

/**
 * Columns of the per-token statistics [T, 8] the kernel writes; all 0 on tokens with w = 0, m below is [w ≠ 0]:
 * w·pg, w·kl, w·H (sum them for the aggregated losses), m·[ratio clipped], m·[dual clipped], m·ρ,
 * m·(oldLogp − logp) (ppo_kl) and m (sum for the token count).
 */
export const POLICY_STATS = [
  "pgLoss",
  "klLoss",
  "entropy",
  "clipped",
  "clippedLower",
  "ratio",
  "ppoKl",
  "tokens",
] as const;

/** The loss settings as the kernel takes them (resolvePolicyLoss in src/rl/policy_loss.ts makes them once a step). */
export interface PolicyKernelSettings {
  /** One of KL_CODES. */
  klCode: number;
  /** The value of the estimator with the gradient of k2. */
  straightThrough: boolean;
  /** ε_low: the ratio is clipped below at 1 − clipLow. */
  clipLow: number;
  /** ε_high: the ratio is clipped above at 1 + clipHigh. */
  clipHigh: number;
  /** The dual clip's constant c > 1 for negative advantages. */
  clipC: number;
  /** c_KL, the KL term's weight. */
  klCoef: number;
  /** c_H, the entropy bonus's weight. */
  entropyCoef: number;
}

/** Columns of the per-token inputs tensor [T, 4]. */
export const POLICY_INPUTS = ["oldLogp", "refLogp", "advantage", "weight"] as const;

/** Host arrays of {@linkcode uploadPolicyInputs}, each [T] (a packed batch's tokens end to end). */
export interface PolicyInputArrays {
  /** Behaviour log-probabilities (the sampler's, or recomputed by the learner). */
  oldLogp: ArrayLike<number>;
  /** Omitted without a reference model (klKind "none"): uploaded as zeros. */
  refLogp?: ArrayLike<number>;
  /** Each token's advantage. */
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
  /** [T] f32, the model's entropies. */
  entropy: Tensor;
  /** [T, 4] f32 from uploadPolicyInputs. */
  inputs: Tensor;
  /** [T] f32 outputs (written). */
  dlogp: Tensor;
  /** [T] f32 output (written): d loss / d entropy. */
  dentropy: Tensor;
  /** [T, 8] f32 output (written), columns POLICY_STATS. */
  stats: Tensor;
}

/**
 * A policy loss's GPU side: records, for T tokens, a fused per-token loss whose surrogate is the loss's own, with the
 * KL and entropy terms and the statistics POLICY_STATS, writing dlogp, dentropy and stats. The registry of policy
 * losses (src/rl/policy_losses.ts) names one per loss.
 */
export type PolicyLossKernel = (batch: Batch, args: PolicyLossArgs, k: PolicyKernelSettings) => void;

/** Records the fused per-token loss with PPO's clipped surrogate (verl's vanilla): dlogp, dentropy and statistics. */
export function policyLossForward(batch: Batch, args: PolicyLossArgs, k: PolicyKernelSettings): void {
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
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, { params: PARAMS }),
    buffers: [args.logp, args.entropy, args.inputs, args.dlogp, args.dentropy, args.stats],
    params: {
      N: T,
      klKind: k.klCode,
      straightThrough: k.straightThrough ? 1 : 0,
      clipLow: k.clipLow,
      clipHigh: k.clipHigh,
      clipC: k.clipC,
      klCoef: k.klCoef,
      entropyCoef: k.entropyCoef,
    },
    grid: foldGrid(batch.gpu, Math.ceil(T / WG)),
  });
}
