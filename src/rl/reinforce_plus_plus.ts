/**
 * REINFORCE++'s entry in the advantage estimators' table (estimators.ts); its math is reinforcePlusPlusAdvantages
 * (advantages.ts), over the outcome reward on each episode's last sampled token.
 */
import { type AdvantageEstimator, outcomeRewards, reinforcePlusPlusAdvantages } from "./advantages.ts";

/** REINFORCE++: the discounted reward-to-go (algorithm.gamma) over the sampled tokens, whitened over the batch. */
export const reinforcePlusPlus: AdvantageEstimator = {
  name: "reinforce_plus_plus",
  summary: "REINFORCE++: the discounted reward-to-go over the sampled tokens, whitened over the batch",
  keys: ["algorithm.gamma"],
  estimate: (x, s) => ({
    advantages: reinforcePlusPlusAdvantages(outcomeRewards(x.scores, x.masks), x.masks, { gamma: s.gamma }).advantages,
  }),
};
