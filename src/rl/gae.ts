/**
 * PPO's GAE: its entry in the advantage estimators' table (estimators.ts), the one that trains a critic; its math is
 * gaeAdvantages (advantages.ts), over the outcome reward on each episode's last sampled token.
 */
import { type AdvantageEstimator, gaeAdvantages, outcomeRewards } from "./advantages.ts";

/** GAE over the sampled tokens with the critic's values (algorithm.gamma, algorithm.lam); returns its targets too. */
export const gae: AdvantageEstimator = {
  name: "gae",
  summary: "PPO's GAE over the sampled tokens with a learned critic's values (trains the critic)",
  keys: ["algorithm.gamma", "algorithm.lam", "critic"],
  critic: true,
  estimate(x, s) {
    if (!x.values) throw new RangeError("GAE's advantages need the critic's values (EstimatorInput.values)");
    return gaeAdvantages(outcomeRewards(x.scores, x.masks), x.values, x.masks, { gamma: s.gamma, lambda: s.lam });
  },
};
