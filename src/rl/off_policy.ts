/**
 * Off-policy corrections of an RL step whose rollouts a policy version older than the learner's sampled (a cluster
 * worker's, rollout.max_staleness > 0), or whose sampler computes log-probabilities a little differently from the
 * learner:
 *
 * - the staleness bound ({@linkcode stalenessRule}, the one statement of it): a trajectory sampled by version v is
 *   usable at RL step s (the learner holds version s − 1 as the step starts) when s − 1 − v ≤ k, k being
 *   `rollout.max_staleness`; past it the trajectory is dropped (its whole group: GRPO's baseline needs the group)
 *   and counted. The run resolves the rule once from its config and passes it down (the RL step, the cluster's
 *   learner);
 * - truncated importance sampling (TIS, verl's and TRL's `tis_cap`): each sampled token's policy-gradient term is
 *   weighted by w_t = min(exp(logπ_learner_t − logπ_sampler_t), C), the learner's behaviour log-prob against the
 *   sampler's. The weight is a constant of the loss (no gradient flows through it), so it is applied by scaling the
 *   token's advantage: the clipped surrogate and its dual clip are positively homogeneous in A, hence
 *   pg(A·w) = w·pg(A) for w > 0, with the same clip decisions; the KL and entropy terms stay unweighted.
 */

/** The staleness rule of a run: rollout.max_staleness = k, resolved once and passed down (see the module header). */
export interface StalenessRule {
  /** k: the versions a rollout may lag the learner's. */
  readonly k: number;
  /** How many versions a rollout of version `version` lags the learner at step `step`: step − 1 − version. */
  behind(version: number, step: number): number;
  /** Whether a rollout of version `version` may train at step `step`: behind ≤ k. */
  usable(version: number, step: number): boolean;
  /** The oldest version whose rollouts may train at step `step` (never below version 0). */
  oldest(step: number): number;
}

/**
 * The staleness rule for `k` versions (rollout.max_staleness); a RangeError names a k that is not a whole number ≥ 0.
 *
 * @example
 * ```ts
 * const rule = stalenessRule(1);
 * rule.usable(2, 4); // true: step 4 starts from version 3, and version 2 is 1 behind
 * rule.usable(1, 4); // false: 2 behind
 * rule.oldest(4); // 2
 * ```
 */
export function stalenessRule(k: number): StalenessRule {
  if (!Number.isInteger(k) || k < 0) {
    throw new RangeError(`rollout.max_staleness must be a whole number >= 0, got ${k}`);
  }
  const behind = (version: number, step: number) => step - 1 - version;
  return {
    k,
    behind,
    usable: (version, step) => behind(version, step) <= k,
    oldest: (step) => Math.max(0, step - 1 - k),
  };
}

/** What the staleness bound kept and dropped of a step's trajectories. */
export interface StalenessSplit<T> {
  kept: T[];
  /** Trajectories of groups with at least one member past the bound. */
  dropped: T[];
  /** Trajectories by staleness (versions behind), over all of them, kept or not. */
  histogram: Map<number, number>;
}

/**
 * Splits step `step`'s trajectories by the staleness rule. `version` of a trajectory is the policy version that
 * sampled it (absent: sampled in-process by the learner's own current weights, staleness 0).
 *
 * @example
 * ```ts
 * const ts = [{ group: 0, version: 4 }, { group: 1, version: 2 }];
 * boundStaleness(ts, 5, stalenessRule(1)).dropped; // [{ group: 1, version: 2 }]: 2 versions behind, the bound is 1
 * ```
 */
export function boundStaleness<T extends { group: number; version?: number }>(
  ts: readonly T[],
  step: number,
  rule: StalenessRule,
): StalenessSplit<T> {
  const histogram = new Map<number, number>();
  const staleGroups = new Set<number>();
  for (const t of ts) {
    const behind = t.version === undefined ? 0 : rule.behind(t.version, step);
    if (behind < 0) {
      throw new RangeError(`A trajectory of policy version ${t.version} is newer than the learner's ${step - 1}`);
    }
    histogram.set(behind, (histogram.get(behind) ?? 0) + 1);
    if (t.version !== undefined && !rule.usable(t.version, step)) staleGroups.add(t.group);
  }
  return {
    kept: ts.filter((t) => !staleGroups.has(t.group)),
    dropped: ts.filter((t) => staleGroups.has(t.group)),
    histogram,
  };
}

/** Truncated importance weights of the sampled tokens and what the metrics count. */
export interface TisWeights {
  /** Per sequence, per response token: w_t on mask-1 tokens, 1 on observation tokens. */
  weights: number[][];
  /** Sampled tokens whose ratio exceeded the cap (tis_clipfrac's numerator). */
  clipped: number;
  /** Sampled tokens. */
  tokens: number;
  /** Σ of the untruncated ratios over sampled tokens (tis_ratio_mean's numerator). */
  ratioSum: number;
  /** Σ of the truncated weights over sampled tokens (tis_weight_mean's numerator). */
  weightSum: number;
}

/**
 * w_t = min(exp(learnerLogp_t − samplerLogp_t), cap) on each sampled token (mask 1), per sequence. The log-ratio is
 * clamped to ±20 before exp, as the policy ratio is.
 *
 * @example
 * ```ts
 * tisWeights([[-1]], [[-1.5]], [[1]], 1.5).weights; // [[1.5]]: e^0.5 ≈ 1.6487 truncated at 1.5
 * ```
 */
export function tisWeights(
  learnerLogp: readonly (readonly number[])[],
  samplerLogp: readonly (readonly number[])[],
  masks: readonly (readonly number[])[],
  cap: number,
): TisWeights {
  if (!(cap > 0)) throw new RangeError(`actor.tis_cap must be > 0, got ${cap}`);
  let clipped = 0, tokens = 0, ratioSum = 0, weightSum = 0;
  const weights = masks.map((mask, i) => {
    if (learnerLogp[i].length !== mask.length || samplerLogp[i].length !== mask.length) {
      throw new TypeError(
        `tisWeights: sequence ${i} has ${mask.length} mask entries but ${learnerLogp[i].length} learner and ` +
          `${samplerLogp[i].length} sampler log-probs`,
      );
    }
    return mask.map((m, t) => {
      if (m === 0) return 1;
      const ratio = Math.exp(Math.min(20, Math.max(-20, learnerLogp[i][t] - samplerLogp[i][t])));
      const w = Math.min(ratio, cap);
      tokens++;
      ratioSum += ratio;
      weightSum += w;
      if (ratio > cap) clipped++;
      return w;
    });
  });
  return { weights, clipped, tokens, ratioSum, weightSum };
}

/** The step metrics of TIS weights: the clip fraction and the mean ratio before and after truncation. */
export function tisMetrics(w: TisWeights): Record<string, number> {
  if (w.tokens === 0) return {};
  return {
    tis_clipfrac: w.clipped / w.tokens,
    tis_ratio_mean: w.ratioSum / w.tokens,
    tis_weight_mean: w.weightSum / w.tokens,
  };
}
