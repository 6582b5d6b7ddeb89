/**
 * REINFORCE++ with a group baseline: its entry in the advantage estimators' table (estimators.ts); its math is
 * reinforceBaselineAdvantages (advantages.ts).
 */
import { type AdvantageEstimator, reinforceBaselineAdvantages } from "./advantages.ts";

/** REINFORCE++ with its group's mean score as the baseline, whitened over the batch. */
export const reinforcePlusPlusBaseline: AdvantageEstimator = {
  name: "reinforce_plus_plus_baseline",
  summary: "REINFORCE++ with its group's mean score as the baseline, whitened over the batch",
  keys: [],
  estimate: (x) => ({ advantages: reinforceBaselineAdvantages(x.scores, x.groups, x.masks) }),
};
