/**
 * The advantage estimators by name (config `algorithm.adv_estimator`), one entry each with the config keys it reads:
 * the RL step looks the configured one up here and hands it the step's trainable episodes. The math lives beside
 * (advantages.ts); an entry only says how the config's settings reach it. A new estimator is one entry: a function
 * on plain arrays with its test, and its line in the table below (or `ADVANTAGE_ESTIMATORS.register(...)` from a
 * module of your own); docs/extending-rl.md walks through one.
 */
import {
  broadcastAdvantages,
  gaeAdvantages,
  type GroupId,
  grpoAdvantages,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
  type Rows,
} from "./advantages.ts";
import { type Registered, Registry } from "./registry.ts";

/** What an estimator sees of one step's B trainable episodes. */
export interface EstimatorInput {
  /** Per episode: its score, the reward less algorithm.round_penalty per round on a success. */
  scores: readonly number[];
  /** Per episode: its prompt group (the episodes of one prompt share it). */
  groups: readonly GroupId[];
  /** Per episode, per response token: 1 where the policy sampled it (it trains), 0 on observations. */
  masks: Rows;
  /** Per episode, per response token: the critic's value of the state before it; only for `critic` estimators. */
  values?: Rows;
}

/**
 * The config's `algorithm` section as the estimators read it: the keys the built-in ones use, and any other key a
 * new estimator reads by name (declared in src/config/schema.ts, listed in its entry's `keys`).
 */
export interface AlgorithmSettings {
  /** algorithm.gamma: the discount per trainable transition. */
  readonly gamma: number;
  /** algorithm.lam: GAE's λ. */
  readonly lam: number;
  /** algorithm.norm_adv_by_std_in_grpo: GRPO divides by its group's std. */
  readonly norm_adv_by_std_in_grpo: boolean;
  /** Any other key of the section, which a registered estimator reads by name. */
  readonly [key: string]: unknown;
}

/** Per episode, per response token: the advantages (0 on observations), and the returns a critic learns. */
export interface EstimatedAdvantages {
  /** Per episode, per response token: the advantage (0 on observations). */
  advantages: number[][];
  /** The critic's targets, from an estimator that needs one (`critic`). */
  returns?: number[][];
}

/** One advantage estimator. */
export interface AdvantageEstimator extends Registered {
  /** It needs the critic's values: the run then trains a critic (config section critic) and passes `values`. */
  readonly critic?: boolean;
  /** The advantages of one step's trainable episodes. */
  estimate(x: EstimatorInput, settings: AlgorithmSettings): EstimatedAdvantages;
}

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
