/**
 * The per-token policy surrogates on plain numbers, with their gradients: PPO's clipped ratio with dual clip (verl's
 * `vanilla` loss). The registry of policy losses (policy_losses.ts) names each; the whole objective around them (KL,
 * entropy, aggregation weights) is policy_loss.ts's. Gradients follow PyTorch's conventions at clamps (a clamp passes
 * the gradient on its closed interval), so they match what verl's autograd computes. A registered loss has the shape
 * PolicyLoss (below): its term here, its GPU kernel in src/ops.
 */
import type { PolicyLossKernel } from "../ops/policy_loss.ts";
import type { Registered } from "./registry.ts";

/**
 * Clip settings of the policy surrogate, every one given: the schema (actor.clip_ratio_low, clip_ratio_high,
 * clip_ratio_c) holds their defaults, and the RL step resolves them once (resolvePolicyLoss, which checks them).
 */
export interface ClipSettings {
  /** ε_low: the ratio is clipped below at 1 − clipLow (actor.clip_ratio_low). */
  clipLow: number;
  /** ε_high: above at 1 + clipHigh (actor.clip_ratio_high; DAPO's clip-higher raises it). */
  clipHigh: number;
  /** Dual clip c > 1: for A < 0 the loss is capped at −A·c (actor.clip_ratio_c). */
  clipC: number;
}

/** One token's surrogate loss, its derivative with respect to logp, and what the metrics count. */
export interface SurrogateTerm {
  /** The token's surrogate loss. */
  loss: number;
  /** d loss / d logp. */
  grad: number;
  /** ρ = exp(clamp(logp − oldLogp, −20, 20)). */
  ratio: number;
  /** 1 when the ratio clip is active (L2 > L1): pg_clipfrac. */
  clipped: number;
  /** 1 when the dual clip is active (A < 0 and max(L1, L2) > −A·c): pg_clipfrac_lower. */
  clippedLower: number;
}

/** Checks clip settings (the schema's bounds, for settings that did not come through it); errors name the value. */
export function checkClip(c: ClipSettings): void {
  if (!(c.clipLow >= 0 && c.clipLow < 1)) throw new RangeError(`clipLow must be in [0, 1), got ${c.clipLow}`);
  if (!(c.clipHigh >= 0)) throw new RangeError(`clipHigh must be >= 0, got ${c.clipHigh}`);
  if (!(c.clipC > 1)) throw new RangeError(`The dual-clip constant clipC must be > 1, got ${c.clipC}`);
}

/**
 * The clipped policy surrogate of one token (verl's `vanilla` loss): Δ = clamp(logp − oldLogp, ±20), ρ = e^Δ,
 * L1 = −Aρ, L2 = −A·clip(ρ, 1 − ε_low, 1 + ε_high), Lc = max(L1, L2); for A < 0 the loss is min(Lc, −A·c).
 * The gradient flows only through an unclipped L1 with the log-ratio inside the clamp.
 *
 * @example
 * ```ts
 * surrogateTerm(Math.log(1.5), 0, 1, { clipLow: 0.2, clipHigh: 0.2, clipC: 3 }).loss; // −1.2: ρ = 1.5 clipped at 1.2
 * ```
 */
export function surrogateTerm(
  logp: number,
  oldLogp: number,
  advantage: number,
  clip: ClipSettings,
): SurrogateTerm {
  const { clipLow, clipHigh, clipC } = clip;
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
  clip: ClipSettings,
): { losses: number[]; grads: number[]; terms: SurrogateTerm[] } {
  if (logp.length !== oldLogp.length || logp.length !== advantages.length) {
    throw new TypeError(`policySurrogate: lengths ${logp.length}, ${oldLogp.length}, ${advantages.length} differ`);
  }
  const terms = Array.from(logp, (l, t) => surrogateTerm(l, oldLogp[t], advantages[t], clip));
  return { losses: terms.map((x) => x.loss), grads: terms.map((x) => x.grad), terms };
}

/** One policy loss. */
export interface PolicyLoss extends Registered {
  /**
   * One token's surrogate: its loss, d loss / d logp, the ratio ρ and the clip flags the metrics count, from the
   * token's log-probabilities now (`logp`) and at sampling (`oldLogp`) and its advantage.
   */
  term(logp: number, oldLogp: number, advantage: number, clip: ClipSettings): SurrogateTerm;
  /** The GPU side: records the fused per-token loss of a packed batch with this surrogate (src/ops). */
  kernel: PolicyLossKernel;
}
