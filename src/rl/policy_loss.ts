/**
 * The actor's loss, the one home of its formula, on plain arrays with gradients (a registered policy loss's
 * surrogate, verl's vanilla by default, plus its KL-loss estimators):
 *
 *   L = Σ_t w_t [pg_t + c_KL · kl_t] − c_H Σ_t w_t H_t
 *
 * with w_t the aggregation weights of the whole mini-batch (aggregationWeights, 0 on mask-0 tokens), pg_t the
 * surrogate of the configured policy loss (policy_losses.ts; vanilla: the clipped ratio of surrogate.ts), kl_t the
 * KL estimator against the reference (kl.ts's registry) and H_t the entropy of the temperature-scaled logits. Tokens are flat [T]
 * arrays: the rows of a packed batch laid end to end. The loss's fused GPU kernel (src/ops/policy_loss.ts for
 * vanilla, run by src/update/policy_head.ts) computes the same per token and is tested against policyObjective.
 * Gradients follow PyTorch's conventions at clamps (a clamp passes the gradient on its closed interval), so they
 * match what verl's autograd computes.
 */
import { KL_CODES, POLICY_STATS, type PolicyKernelSettings } from "../ops/policy_loss.ts";
import { type KlEstimator, klEstimator, type KlKind } from "./kl.ts";
import { policyLoss } from "./policy_losses.ts";
import { checkClip, type ClipSettings, type PolicyLoss } from "./surrogate.ts";

export { aggregateLoss, aggregationWeights, LOSS_AGG_MODES, type LossAggMode } from "./aggregation.ts";
export { POLICY_STATS } from "../ops/policy_loss.ts";

/**
 * The actor's loss settings, every one given: the config's actor section holds their defaults (src/config/schema.ts
 * alone), and the RL step reads them once per step and resolves them (resolvePolicyLoss) before handing them down.
 */
export interface PolicyLossSettings extends ClipSettings {
  /** The surrogate, a registered policy loss's name (actor.policy_loss). */
  loss: string;
  /** The KL estimator against the reference (actor.kl_loss_type, kl.ts), or "none" to skip the term. */
  klKind: KlKind | "none";
  /** c_KL (actor.kl_loss_coef). The KL statistic is still computed with c_KL = 0 unless klKind is "none". */
  klCoef: number;
  /** c_H, the entropy bonus (actor.entropy_coeff). */
  entropyCoef: number;
}

/** The settings of one RL step, checked and looked up once: what the objective, the kernel and the metrics read. */
export interface ResolvedPolicyLoss {
  /** The settings as given. */
  readonly settings: Readonly<PolicyLossSettings>;
  /** The registered policy loss (its term, its kernel). */
  readonly surrogate: PolicyLoss;
  /** The KL estimator and whether it is straight-through; undefined for "none". */
  readonly kl: { estimator: KlEstimator; straightThrough: boolean } | undefined;
  /** The settings as the GPU kernel takes them. */
  readonly kernel: PolicyKernelSettings;
}

/**
 * Checks the settings and looks up their loss and KL estimator: once per RL step (the step's update hands the result
 * to every mini-batch). Errors name the value: an unknown name lists the registered ones.
 *
 * @example
 * ```ts
 * const loss = resolvePolicyLoss({
 *   loss: "vanilla", clipLow: 0.2, clipHigh: 0.2, clipC: 3, klKind: "low_var_kl", klCoef: 1e-3, entropyCoef: 0,
 * });
 * loss.kernel.klCode; // 3, k3
 * ```
 */
export function resolvePolicyLoss(settings: PolicyLossSettings): ResolvedPolicyLoss {
  checkClip(settings);
  const surrogate = policyLoss(settings.loss);
  const kl = settings.klKind === "none" ? undefined : klEstimator(settings.klKind);
  for (const k of ["klCoef", "entropyCoef"] as const) {
    if (!Number.isFinite(settings[k])) throw new RangeError(`${k} must be finite, got ${settings[k]}`);
  }
  const kernel: PolicyKernelSettings = {
    klCode: kl?.estimator.code ?? KL_CODES.none,
    straightThrough: kl?.straightThrough ?? false,
    clipLow: settings.clipLow,
    clipHigh: settings.clipHigh,
    clipC: settings.clipC,
    klCoef: settings.klCoef,
    entropyCoef: settings.entropyCoef,
  };
  return { settings: { ...settings }, surrogate, kl, kernel };
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
 * const loss = resolvePolicyLoss({
 *   loss: "vanilla", clipLow: 0.2, clipHigh: 0.2, clipC: 3, klKind: "none", klCoef: 0, entropyCoef: 0,
 * });
 * policyObjective({ logp: one, entropy: [1], oldLogp: one, refLogp: one, advantages: [2], weights: [0.5] }, loss);
 * // loss −1 (−w·A·ρ at ρ = 1), dlogp [−1]
 * ```
 */
export function policyObjective(x: PolicyTokens, loss: ResolvedPolicyLoss): PolicyObjective {
  const s = loss.settings, kl = loss.kl;
  const T = x.weights.length;
  for (const name of ["logp", "entropy", "oldLogp", "refLogp", "advantages"] as const) {
    if (name === "refLogp" && !kl) continue;
    if (x[name].length !== T) throw new TypeError(`policyObjective: ${name} has ${x[name].length} tokens, not ${T}`);
  }
  const S = POLICY_STATS.length, surrogate = loss.surrogate.term;
  const dlogp = new Float64Array(T), dentropy = new Float64Array(T), stats = new Float64Array(T * S);
  let total = 0;
  for (let t = 0; t < T; t++) {
    const w = x.weights[t];
    if (w === 0) continue;
    const lp = x.logp[t], h = x.entropy[t];
    const pg = surrogate(lp, x.oldLogp[t], x.advantages[t], s);
    const d = kl ? lp - x.refLogp[t] : 0;
    const [k, dk] = kl ? kl.estimator.term(d) : [0, 0];
    const dkl = kl?.straightThrough ? d : dk;
    total += w * (pg.loss + s.klCoef * k - s.entropyCoef * h);
    dlogp[t] = w * (pg.grad + s.klCoef * dkl);
    dentropy[t] = -s.entropyCoef * w;
    stats.set([w * pg.loss, w * k, w * h, pg.clipped, pg.clippedLower, pg.ratio, x.oldLogp[t] - lp, 1], t * S);
  }
  return { loss: total, dlogp, dentropy, stats };
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
 * mini-batch's metrics. The loss parts add up across micro-batches because the weights are the mini-batch's; the
 * total weighs them with the step's coefficients.
 */
export function policyMetrics(
  stats: ArrayLike<number> | readonly ArrayLike<number>[],
  s: Pick<PolicyLossSettings, "klCoef" | "entropyCoef">,
): PolicyMetrics {
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
