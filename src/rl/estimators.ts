/**
 * The advantage estimators by name (config `algorithm.adv_estimator`): the RL step looks the configured one up here
 * and hands it the step's trainable episodes. Each built-in one is an entry in a file of its own (src/rl/<name>.ts),
 * saying which config keys it reads and how they reach its math; the shape of an entry (AdvantageEstimator) and the
 * shared math live in advantages.ts. A new estimator is one such file with its test, and its line in the table below
 * (or `ADVANTAGE_ESTIMATORS.register(...)` from a module of your own); docs/extending-rl.md walks through one.
 */
import type { AdvantageEstimator } from "./advantages.ts";
import { gae } from "./gae.ts";
import { gigpo } from "./gigpo.ts";
import { grpo } from "./grpo.ts";
import { Registry } from "./registry.ts";
import { reinforcePlusPlus } from "./reinforce_plus_plus.ts";
import { reinforcePlusPlusBaseline } from "./reinforce_plus_plus_baseline.ts";
import { rloo } from "./rloo.ts";

/** Every advantage estimator, by name: the built-in ones, and any registered since. */
export const ADVANTAGE_ESTIMATORS: Registry<AdvantageEstimator> = new Registry<AdvantageEstimator>(
  "advantage estimator",
  "algorithm.adv_estimator",
  [grpo, rloo, reinforcePlusPlus, reinforcePlusPlusBaseline, gae, gigpo],
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
