/**
 * The actor's per-token objective, on the CPU: what the fused GPU kernel (policy_loss.ts) computes for each token
 * of a packed batch, and how the trainer turns its per-token statistics into metrics.
 *
 *   L = Σ_t w_t [pg_t + c_KL · kl_t] − c_H Σ_t w_t H_t
 *
 * with w_t the aggregation weights of the whole mini-batch (aggregationWeights, 0 on mask-0 tokens), pg_t the
 * clipped surrogate, kl_t the KL estimator against the reference and H_t the entropy of the temperature-scaled
 * logits. Tokens are flat [T] arrays: the rows of a packed batch laid end to end.
 */
import { type ClipSettings, clipSettings, klCode, type KlKind, klTerm, surrogateTerm } from "./losses.ts";

/** Loss settings of the actor. */
export interface PolicyLossSettings extends ClipSettings {
  /** KL estimator against the reference, or "none" to skip it (default "low_var_kl", k3 with both clamps). */
  klKind?: KlKind | "none";
  /** c_KL (default 1e-3). The KL statistic is still computed with c_KL = 0 unless klKind is "none". */
  klCoef?: number;
  /** c_H, the entropy bonus (default 0). */
  entropyCoef?: number;
}

/** Defaults of {@linkcode PolicyLossSettings}: verl's clip defaults, dual clip 3, k3 KL at 1e-3, no entropy bonus. */
export const POLICY_LOSS_DEFAULTS: Required<PolicyLossSettings> = {
  clipLow: 0.2,
  clipHigh: 0.2,
  clipC: 3,
  klKind: "low_var_kl",
  klCoef: 1e-3,
  entropyCoef: 0,
};

/** Checks settings and fills defaults. */
export function policyLossSettings(s: PolicyLossSettings = {}): Required<PolicyLossSettings> {
  const d = POLICY_LOSS_DEFAULTS;
  const out = {
    ...clipSettings(s),
    klKind: s.klKind ?? d.klKind,
    klCoef: s.klCoef ?? d.klCoef,
    entropyCoef: s.entropyCoef ?? d.entropyCoef,
  };
  if (out.klKind !== "none") klCode(out.klKind);
  if (!Number.isFinite(out.klCoef)) throw new RangeError(`klCoef must be finite, got ${out.klCoef}`);
  if (!Number.isFinite(out.entropyCoef)) throw new RangeError(`entropyCoef must be finite, got ${out.entropyCoef}`);
  return out;
}

/**
 * Columns of the per-token statistics [T, 8]; all 0 on tokens with w = 0, m below is [w ≠ 0]:
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

/** Per-token inputs of one packed batch, each [T]. */
export interface PolicyTokens {
  /** Current log-probabilities (temperature-scaled logits), the model's output. */
  logp: ArrayLike<number>;
  entropy: ArrayLike<number>;
  /** Behaviour log-probabilities (recomputed by the actor before the update). */
  oldLogp: ArrayLike<number>;
  /** Reference log-probabilities; ignored when klKind is "none". */
  refLogp: ArrayLike<number>;
  advantages: ArrayLike<number>;
  /** Aggregation weights w_t, 0 on masked tokens, whose other inputs are then never read. */
  weights: ArrayLike<number>;
}

/** The objective of a packed batch: its value, gradients [T] and statistics [T, 8] (see POLICY_STATS). */
export interface PolicyObjective {
  loss: number;
  dlogp: Float64Array;
  dentropy: Float64Array;
  stats: Float64Array;
}

/**
 * L and its gradients with respect to each token's logp and entropy, as the GPU kernel computes them.
 *
 * @example
 * ```ts
 * const one = [0];
 * policyObjective({ logp: one, entropy: [1], oldLogp: one, refLogp: one, advantages: [2], weights: [0.5] });
 * // loss −1 (−w·A·ρ at ρ = 1), dlogp [−1]
 * ```
 */
export function policyObjective(x: PolicyTokens, settings: PolicyLossSettings = {}): PolicyObjective {
  const s = policyLossSettings(settings);
  const T = x.weights.length;
  for (const name of ["logp", "entropy", "oldLogp", "refLogp", "advantages"] as const) {
    if (name === "refLogp" && s.klKind === "none") continue;
    if (x[name].length !== T) throw new TypeError(`policyObjective: ${name} has ${x[name].length} tokens, not ${T}`);
  }
  const S = POLICY_STATS.length;
  const dlogp = new Float64Array(T), dentropy = new Float64Array(T), stats = new Float64Array(T * S);
  let loss = 0;
  for (let t = 0; t < T; t++) {
    const w = x.weights[t];
    if (w === 0) continue;
    const lp = x.logp[t], h = x.entropy[t];
    const pg = surrogateTerm(lp, x.oldLogp[t], x.advantages[t], s);
    const [kl, dkl] = s.klKind === "none" ? [0, 0] : klTerm(lp, x.refLogp[t], s.klKind);
    loss += w * (pg.loss + s.klCoef * kl - s.entropyCoef * h);
    dlogp[t] = w * (pg.grad + s.klCoef * dkl);
    dentropy[t] = -s.entropyCoef * w;
    stats.set([w * pg.loss, w * kl, w * h, pg.clipped, pg.clippedLower, pg.ratio, x.oldLogp[t] - lp, 1], t * S);
  }
  return { loss, dlogp, dentropy, stats };
}

/** Metrics of one mini-batch from its per-token statistics (see POLICY_STATS). */
export interface PolicyMetrics {
  /** The total loss L. */
  loss: number;
  /** Aggregated surrogate Σ w·pg, KL Σ w·kl and entropy Σ w·H. */
  pgLoss: number;
  klLoss: number;
  entropy: number;
  /** Masked means over the trained tokens. */
  pgClipfrac: number;
  pgClipfracLower: number;
  ratioMean: number;
  ppoKl: number;
  tokens: number;
}

/**
 * Sums statistics [T, 8] of one or more micro-batches (read back from the GPU or from policyObjective) into the
 * mini-batch's metrics. The loss parts add up across micro-batches because the weights are the mini-batch's.
 */
export function policyMetrics(
  stats: ArrayLike<number> | readonly ArrayLike<number>[],
  settings: PolicyLossSettings = {},
): PolicyMetrics {
  const s = policyLossSettings(settings);
  const S = POLICY_STATS.length;
  const sums = new Float64Array(S);
  const parts = Array.isArray(stats) ? stats as readonly ArrayLike<number>[] : [stats as ArrayLike<number>];
  for (const part of parts) {
    if (part.length % S !== 0) throw new TypeError(`Policy statistics must be [T, ${S}], got ${part.length} values`);
    for (let i = 0; i < part.length; i++) sums[i % S] += part[i];
  }
  const [pgLoss, klLoss, entropy, clipped, clippedLower, ratio, ppoKl, tokens] = sums;
  const mean = (v: number) => (tokens === 0 ? 0 : v / tokens);
  return {
    loss: pgLoss + s.klCoef * klLoss - s.entropyCoef * entropy,
    pgLoss,
    klLoss,
    entropy,
    pgClipfrac: mean(clipped),
    pgClipfracLower: mean(clippedLower),
    ratioMean: mean(ratio),
    ppoKl: mean(ppoKl),
    tokens,
  };
}
