/**
 * The actor's loss, the one home of its formula, on plain arrays with gradients (a registered policy loss's
 * surrogate, verl's vanilla by default, plus its KL-loss estimators):
 *
 *   L = Σ_t w_t [pg_t + c_KL · kl_t] − c_H Σ_t w_t H_t
 *
 * with w_t the aggregation weights of the whole mini-batch (aggregationWeights, 0 on mask-0 tokens), pg_t the
 * surrogate of the configured policy loss (policy_losses.ts; vanilla: the clipped ratio of surrogate.ts), kl_t the
 * KL estimator against the reference and H_t the entropy of the temperature-scaled logits. Tokens are flat [T]
 * arrays: the rows of a packed batch laid end to end. The loss's fused GPU kernel (src/ops/policy_loss.ts for
 * vanilla, run by src/update/policy_head.ts) computes the same per token and is tested against policyObjective.
 * Gradients follow PyTorch's conventions at clamps (a clamp passes the gradient on its closed interval), so they
 * match what verl's autograd computes.
 */
import { KL_CODES, POLICY_STATS, type PolicyKernelSettings } from "../ops/policy_loss.ts";
import { policyLoss } from "./policy_losses.ts";
import { type ClipSettings, clipSettings } from "./surrogate.ts";

export { aggregateLoss, aggregationWeights, LOSS_AGG_MODES, type LossAggMode } from "./aggregation.ts";
export { POLICY_STATS } from "../ops/policy_loss.ts";

/** KL estimators by their verl names; aliases: kl = k1, mse = k2, low_var_kl = k3. */
export const KL_KINDS = ["k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl"] as const;

/** A KL estimator; a `+` suffix is straight-through: the value of the estimator, the gradient of k2. */
export type KlKind = typeof KL_KINDS[number] | `${typeof KL_KINDS[number]}+`;

/** The estimator a kind computes (0 k1, 1 abs, 2 k2, 3 k3: the GPU kernel's codes) and whether it is `+`. */
export function klCode(kind: KlKind): { code: number; straightThrough: boolean } {
  const straightThrough = kind.endsWith("+");
  const base = straightThrough ? kind.slice(0, -1) : kind;
  const c = KL_CODES;
  const code = { k1: c.k1, kl: c.k1, abs: c.abs, k2: c.k2, mse: c.k2, k3: c.k3, low_var_kl: c.k3 }[base];
  if (code === undefined) throw new RangeError(`Unknown KL kind "${kind}"; use one of ${KL_KINDS.join(", ")}`);
  return { code, straightThrough };
}

/**
 * KL estimate of one token and its derivative with respect to logp, with d = logp − refLogp:
 * k1 = d; abs = |d|; k2 = d²/2; k3 = clamp(e^u − u − 1, −10, 10) with u = clamp(−d, −20, 20).
 * Returns [value, d value / d logp].
 */
export function klTerm(logp: number, refLogp: number, kind: KlKind): [number, number] {
  const { code, straightThrough } = klCode(kind);
  const d = logp - refLogp;
  let value: number, grad: number;
  if (code === 0) [value, grad] = [d, 1];
  else if (code === 1) [value, grad] = [Math.abs(d), Math.sign(d)];
  else if (code === 2) [value, grad] = [0.5 * d * d, d];
  else {
    const u = Math.min(20, Math.max(-20, -d));
    const k = Math.exp(u) - u - 1;
    value = Math.min(10, Math.max(-10, k));
    // du/dlogp = −1 inside the inner clamp; dk/du = e^u − 1; the outer clamp passes k ≤ 10 (k ≥ 0 always).
    grad = Math.abs(d) <= 20 && k <= 10 ? 1 - Math.exp(u) : 0;
  }
  return [value, straightThrough ? d : grad];
}

/**
 * Per-token KL penalty of the current log-probabilities against the reference.
 *
 * @example
 * ```ts
 * klPenalty([-1.5], [-1], "low_var_kl"); // [e^0.5 − 1.5] ≈ [0.1487]
 * ```
 */
export function klPenalty(logp: ArrayLike<number>, refLogp: ArrayLike<number>, kind: KlKind): number[] {
  if (logp.length !== refLogp.length) throw new TypeError(`klPenalty: ${logp.length} logp but ${refLogp.length} ref`);
  return Array.from(logp, (l, t) => klTerm(l, refLogp[t], kind)[0]);
}

/** d klPenalty / d logp per token (for `+` kinds, the k2 gradient d). */
export function klPenaltyGrad(logp: ArrayLike<number>, refLogp: ArrayLike<number>, kind: KlKind): number[] {
  if (logp.length !== refLogp.length) {
    throw new TypeError(`klPenaltyGrad: ${logp.length} logp but ${refLogp.length} ref`);
  }
  return Array.from(logp, (l, t) => klTerm(l, refLogp[t], kind)[1]);
}

/** Loss settings of the actor. */
export interface PolicyLossSettings extends ClipSettings {
  /** The surrogate, a registered policy loss's name (actor.policy_loss; default "vanilla", PPO's clipped ratio). */
  loss?: string;
  /** KL estimator against the reference, or "none" to skip it (default "low_var_kl", k3 with both clamps). */
  klKind?: KlKind | "none";
  /** c_KL (default 1e-3). The KL statistic is still computed with c_KL = 0 unless klKind is "none". */
  klCoef?: number;
  /** c_H, the entropy bonus (default 0). */
  entropyCoef?: number;
}

/** Defaults of {@linkcode PolicyLossSettings}: verl's clip defaults, dual clip 3, k3 KL at 1e-3, no entropy bonus. */
export const POLICY_LOSS_DEFAULTS: Required<PolicyLossSettings> = {
  loss: "vanilla",
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
    loss: s.loss ?? d.loss,
    ...clipSettings(s),
    klKind: s.klKind ?? d.klKind,
    klCoef: s.klCoef ?? d.klCoef,
    entropyCoef: s.entropyCoef ?? d.entropyCoef,
  };
  policyLoss(out.loss); // an unknown name fails here, naming the registered ones
  if (out.klKind !== "none") klCode(out.klKind);
  if (!Number.isFinite(out.klCoef)) throw new RangeError(`klCoef must be finite, got ${out.klCoef}`);
  if (!Number.isFinite(out.entropyCoef)) throw new RangeError(`entropyCoef must be finite, got ${out.entropyCoef}`);
  return out;
}

/** The settings as the GPU kernel takes them. */
export function policyKernelSettings(settings: PolicyLossSettings = {}): PolicyKernelSettings {
  const s = policyLossSettings(settings);
  const kl = s.klKind === "none" ? { code: KL_CODES.none, straightThrough: false } : klCode(s.klKind);
  return {
    klCode: kl.code,
    straightThrough: kl.straightThrough,
    clipLow: s.clipLow,
    clipHigh: s.clipHigh,
    clipC: s.clipC,
    klCoef: s.klCoef,
    entropyCoef: s.entropyCoef,
  };
}

/** Per-token inputs of one packed batch, each [T]. */
export interface PolicyTokens {
  /** Current log-probabilities (temperature-scaled logits), the model's output. */
  logp: ArrayLike<number>;
  /** Entropies of the temperature-scaled distributions, the model's output. */
  entropy: ArrayLike<number>;
  /** Behaviour log-probabilities (recomputed by the actor before the update). */
  oldLogp: ArrayLike<number>;
  /** Reference log-probabilities; ignored when klKind is "none". */
  refLogp: ArrayLike<number>;
  /** Each token's advantage. */
  advantages: ArrayLike<number>;
  /** Aggregation weights w_t, 0 on masked tokens, whose other inputs are then never read. */
  weights: ArrayLike<number>;
}

/** The objective of a packed batch: its value, gradients [T] and statistics [T, 8] (see POLICY_STATS). */
export interface PolicyObjective {
  /** L, summed over the tokens. */
  loss: number;
  /** [T] d L / d logp. */
  dlogp: Float64Array;
  /** [T] d L / d entropy. */
  dentropy: Float64Array;
  /** [T, 8] per-token statistics, columns POLICY_STATS. */
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
  const S = POLICY_STATS.length, surrogate = policyLoss(s.loss).term;
  const dlogp = new Float64Array(T), dentropy = new Float64Array(T), stats = new Float64Array(T * S);
  let loss = 0;
  for (let t = 0; t < T; t++) {
    const w = x.weights[t];
    if (w === 0) continue;
    const lp = x.logp[t], h = x.entropy[t];
    const pg = surrogate(lp, x.oldLogp[t], x.advantages[t], s);
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
  /** Σ w·kl, the aggregated KL estimate (a measurement only with a reference policy). */
  klLoss: number;
  /** Σ w·H, the aggregated entropy. */
  entropy: number;
  /** Masked means over the trained tokens. */
  pgClipfrac: number;
  /** Share of trained tokens where the dual clip was active (verl's pg_clipfrac_lower). */
  pgClipfracLower: number;
  /** Mean ratio ρ over the trained tokens. */
  ratioMean: number;
  /** Mean of oldLogp − logp over the trained tokens (verl's ppo_kl). */
  ppoKl: number;
  /** Trained tokens (weight ≠ 0) counted. */
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
