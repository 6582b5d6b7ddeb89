/**
 * The advantage estimators by name (config `algorithm.adv_estimator`), one entry each with the config keys it reads:
 * the RL step looks the configured one up here and hands it the step's trainable episodes. The math and the shape of
 * an entry (AdvantageEstimator) live in advantages.ts; an entry only says how the config's settings reach the math.
 * A new estimator is one entry in a file of its own (src/rl/<name>.ts) with its test, and its line in the table
 * below (or `ADVANTAGE_ESTIMATORS.register(...)` from a module of your own); docs/extending-rl.md walks through one.
 */
import {
  type AdvantageEstimator,
  broadcastAdvantages,
  gaeAdvantages,
  grpoAdvantages,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
} from "./advantages.ts";
import { Registry } from "./registry.ts";

/** Every advantage estimator, by name: the built-in ones, and any registered since. */
export const ADVANTAGE_ESTIMATORS: Registry<AdvantageEstimator> = new Registry<AdvantageEstimator>(
  "advantage estimator",
  "algorithm.adv_estimator",
  [
    {
      name: "grpo",
      summary: "GRPO: each episode's score against its group's mean, over the group's std (Dr. GRPO without it)",
      keys: ["algorithm.norm_adv_by_std_in_grpo"],
      estimate: (x, s) => ({
        advantages: broadcastAdvantages(
          grpoAdvantages(x.scores, x.groups, { normalizeByStd: s.norm_adv_by_std_in_grpo }),
          x.masks,
        ),
      }),
    },
    {
      name: "rloo",
      summary: "RLOO: each episode's score against the mean of the other episodes of its group",
      keys: [],
      estimate: (x) => ({ advantages: broadcastAdvantages(rlooAdvantages(x.scores, x.groups), x.masks) }),
    },
    {
      name: "reinforce_plus_plus",
      summary: "REINFORCE++: the discounted reward-to-go over the sampled tokens, whitened over the batch",
      keys: ["algorithm.gamma"],
      estimate: (x, s) => ({
        advantages: reinforcePlusPlusAdvantages(outcomeRewards(x.scores, x.masks), x.masks, { gamma: s.gamma })
          .advantages,
      }),
    },
    {
      name: "reinforce_plus_plus_baseline",
      summary: "REINFORCE++ with its group's mean score as the baseline, whitened over the batch",
      keys: [],
      estimate: (x) => ({ advantages: reinforceBaselineAdvantages(x.scores, x.groups, x.masks) }),
    },
    {
      name: "gae",
      summary: "PPO's GAE over the sampled tokens with a learned critic's values (trains the critic)",
      keys: ["algorithm.gamma", "algorithm.lam", "critic"],
      critic: true,
      estimate(x, s) {
        if (!x.values) throw new RangeError("GAE's advantages need the critic's values (EstimatorInput.values)");
        return gaeAdvantages(outcomeRewards(x.scores, x.masks), x.values, x.masks, { gamma: s.gamma, lambda: s.lam });
      },
    },
  ],
);

/**
 * The estimator called `name`; a RangeError naming the registered ones otherwise.
 *
 * @example
 * ```ts
 * const settings = { gamma: 1, lam: 1, norm_adv_by_std_in_grpo: true };
 * advantageEstimator("grpo").estimate({ scores: [1, 0], groups: [0, 0], masks: [[1], [1]] }, settings);
 * // { advantages: [[0.7071], [-0.7071]] }
 * ```
 */
export function advantageEstimator(name: string): AdvantageEstimator {
  return ADVANTAGE_ESTIMATORS.get(name);
}
