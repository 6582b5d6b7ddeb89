/**
 * Per-token RL losses on plain arrays, with their gradients: KL to a frozen reference, the clipped policy
 * surrogate, and the clipped value loss (rl.md §1.2, §1.4, §2.2). These are the CPU definitions the fused GPU loss
 * (policy_loss.ts) is tested against. Gradients follow PyTorch's conventions at clamps (a clamp passes the gradient
 * on its closed interval) so they match what verl's autograd computes.
 */
import type { Rows } from "./advantages.ts";
import { type AggregationOptions, aggregationWeights, type LossAggMode } from "./aggregation.ts";

export {
  aggregateLoss,
  type AggregationOptions,
  type AggregationTotals,
  aggregationTotals,
  aggregationWeights,
  LOSS_AGG_MODES,
  type LossAggMode,
} from "./aggregation.ts";

/** KL estimators by their verl names; aliases: kl = k1, mse = k2, low_var_kl = k3. */
export const KL_KINDS = ["k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl"] as const;

/** A KL estimator; a `+` suffix is straight-through: the value of the estimator, the gradient of k2. */
export type KlKind = typeof KL_KINDS[number] | `${typeof KL_KINDS[number]}+`;

/** The estimator a kind computes (0 k1, 1 abs, 2 k2, 3 k3: the GPU kernel's codes) and whether it is `+`. */
export function klCode(kind: KlKind): { code: number; straightThrough: boolean } {
  const straightThrough = kind.endsWith("+");
  const base = straightThrough ? kind.slice(0, -1) : kind;
  const code = { k1: 0, kl: 0, abs: 1, k2: 2, mse: 2, k3: 3, low_var_kl: 3 }[base];
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

/** Clip settings of the policy surrogate (verl's defaults). */
export interface ClipSettings {
  /** ε_low: the ratio is clipped below at 1 − clipLow (default 0.2). */
  clipLow?: number;
  /** ε_high: above at 1 + clipHigh (default 0.2; DAPO uses 0.28). */
  clipHigh?: number;
  /** Dual clip c > 1: for A < 0 the loss is capped at −A·c (default 3). */
  clipC?: number;
}

/** One token's surrogate loss, its derivative with respect to logp, and what the metrics count. */
export interface SurrogateTerm {
  loss: number;
  grad: number;
  /** ρ = exp(clamp(logp − oldLogp, −20, 20)). */
  ratio: number;
  /** 1 when the ratio clip is active (L2 > L1): pg_clipfrac. */
  clipped: number;
  /** 1 when the dual clip is active (A < 0 and max(L1, L2) > −A·c): pg_clipfrac_lower. */
  clippedLower: number;
}

/** Checks clip settings and fills defaults. */
export function clipSettings(c: ClipSettings = {}): Required<ClipSettings> {
  const s = { clipLow: c.clipLow ?? 0.2, clipHigh: c.clipHigh ?? 0.2, clipC: c.clipC ?? 3 };
  if (!(s.clipLow >= 0 && s.clipLow < 1)) throw new RangeError(`clipLow must be in [0, 1), got ${s.clipLow}`);
  if (!(s.clipHigh >= 0)) throw new RangeError(`clipHigh must be >= 0, got ${s.clipHigh}`);
  if (!(s.clipC > 1)) throw new RangeError(`The dual-clip constant clipC must be > 1, got ${s.clipC}`);
  return s;
}

/**
 * The clipped policy surrogate of one token (verl's `vanilla` loss): Δ = clamp(logp − oldLogp, ±20), ρ = e^Δ,
 * L1 = −Aρ, L2 = −A·clip(ρ, 1 − ε_low, 1 + ε_high), Lc = max(L1, L2); for A < 0 the loss is min(Lc, −A·c).
 * The gradient flows only through an unclipped L1 with the log-ratio inside the clamp.
 *
 * @example
 * ```ts
 * surrogateTerm(Math.log(1.5), 0, 1).loss; // −1.2: A > 0 and ρ = 1.5 is clipped at 1 + 0.2
 * ```
 */
export function surrogateTerm(
  logp: number,
  oldLogp: number,
  advantage: number,
  clip: ClipSettings = {},
): SurrogateTerm {
  const { clipLow, clipHigh, clipC } = clipSettings(clip);
  const diff = logp - oldLogp;
  const ratio = Math.exp(Math.min(20, Math.max(-20, diff)));
  const l1 = -advantage * ratio;
  const l2 = -advantage * Math.min(1 + clipHigh, Math.max(1 - clipLow, ratio));
  const clipped = l2 > l1 ? 1 : 0;
  let loss = Math.max(l1, l2);
  let grad = clipped === 0 && Math.abs(diff) <= 20 ? -advantage * ratio : 0;
  let clippedLower = 0;
  if (advantage < 0) {
    const l3 = -advantage * clipC;
    if (loss > l3) [loss, grad, clippedLower] = [l3, 0, 1];
  }
  return { loss, grad, ratio, clipped, clippedLower };
}

/** {@linkcode surrogateTerm} over arrays of tokens: per-token losses and gradients with respect to logp. */
export function policySurrogate(
  logp: ArrayLike<number>,
  oldLogp: ArrayLike<number>,
  advantages: ArrayLike<number>,
  clip: ClipSettings = {},
): { losses: number[]; grads: number[]; terms: SurrogateTerm[] } {
  if (logp.length !== oldLogp.length || logp.length !== advantages.length) {
    throw new TypeError(`policySurrogate: lengths ${logp.length}, ${oldLogp.length}, ${advantages.length} differ`);
  }
  const terms = Array.from(logp, (l, t) => surrogateTerm(l, oldLogp[t], advantages[t], clip));
  return { losses: terms.map((x) => x.loss), grads: terms.map((x) => x.grad), terms };
}

/** Result of {@linkcode valueLoss}. */
export interface ValueLoss {
  loss: number;
  /** d loss / d V per token, rows like the inputs (0 on mask-0 tokens). */
  grads: number[][];
  /** Masked mean of [clipped branch larger]: verl's vf_clipfrac. */
  clipfrac: number;
}

/**
 * The clipped value loss ½·agg(max((V − R)², (V_clip − R)²)) with V_clip = clip(V, V_old − c, V_old + c),
 * aggregated like the policy loss. `clipRange` c defaults to 0.5 (verl's `cliprange_value`).
 *
 * @example
 * ```ts
 * valueLoss([[1]], [[0]], [[2]], [[1]], "token-mean").loss; // ½·max(1, 2.25) = 1.125
 * ```
 */
export function valueLoss(
  values: Rows,
  oldValues: Rows,
  returns: Rows,
  masks: Rows,
  mode: LossAggMode,
  options: AggregationOptions & { clipRange?: number } = {},
): ValueLoss {
  const c = options.clipRange ?? 0.5;
  if (!(c >= 0)) throw new RangeError(`clipRange must be >= 0, got ${c}`);
  for (const [name, rows] of [["values", values], ["oldValues", oldValues], ["returns", returns]] as const) {
    if (rows.length !== masks.length || rows.some((r, i) => r.length !== masks[i].length)) {
      throw new TypeError(`valueLoss: ${name} rows must match the mask rows in number and length`);
    }
  }
  const weights = aggregationWeights(masks, mode, options);
  let loss = 0, clippedCount = 0, count = 0;
  const grads = masks.map((m, i) =>
    Array.from(m, (mt, t) => {
      if (mt === 0) return 0;
      const v = values[i][t], r = returns[i][t];
      const vClip = Math.min(oldValues[i][t] + c, Math.max(oldValues[i][t] - c, v));
      const a = (v - r) ** 2, b = (vClip - r) ** 2;
      count++;
      loss += weights[i][t] * 0.5 * Math.max(a, b);
      if (b > a) {
        clippedCount++;
        return 0; // the clipped branch is constant in V (V is outside the clip range)
      }
      return weights[i][t] * (v - r);
    })
  );
  return { loss, grads, clipfrac: count === 0 ? 0 : clippedCount / count };
}
