/** GRPO's entry in the advantage estimators' table (estimators.ts); its math is grpoAdvantages (advantages.ts). */
import { type AdvantageEstimator, broadcastAdvantages, grpoAdvantages } from "./advantages.ts";

/** GRPO: each episode's score against its group's mean, over its std unless algorithm.norm_adv_by_std_in_grpo is off. */
export const grpo: AdvantageEstimator = {
  name: "grpo",
  summary: "GRPO: each episode's score against its group's mean, over the group's std (Dr. GRPO without it)",
  keys: ["algorithm.norm_adv_by_std_in_grpo"],
  estimate: (x, s) => ({
    advantages: broadcastAdvantages(
      grpoAdvantages(x.scores, x.groups, { normalizeByStd: s.norm_adv_by_std_in_grpo }),
      x.masks,
    ),
  }),
};
