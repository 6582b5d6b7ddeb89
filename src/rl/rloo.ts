/** RLOO's entry in the advantage estimators' table (estimators.ts); its math is rlooAdvantages (advantages.ts). */
import { type AdvantageEstimator, broadcastAdvantages, rlooAdvantages } from "./advantages.ts";

/** RLOO: each episode's score against the mean of the other episodes of its group. */
export const rloo: AdvantageEstimator = {
  name: "rloo",
  summary: "RLOO: each episode's score against the mean of the other episodes of its group",
  keys: [],
  estimate: (x) => ({ advantages: broadcastAdvantages(rlooAdvantages(x.scores, x.groups), x.masks) }),
};
