/**
 * GiGPO (Feng et al. 2025, arXiv 2505.10978; verl-agent's `gigpo`): credit for each turn without a critic, from two
 * levels of groups.
 *
 * - Episode level: each episode's score against its prompt group, exactly GRPO's rule (grpoAdvantages: a group of
 *   one keeps its score; with normalizeByStd, divided by the group's unbiased std + 1e-6).
 * - Step level: within one prompt group, the turns that acted from the same state (equal anchors, from any of the
 *   group's episodes, several of one episode too) form a step group. Each turn's discounted return
 *   R_t = Σ_{k≥t} γ^(k−t) r_k (r_k what turn k earned) is compared with its step group's mean (and divided by its
 *   unbiased std + 1e-6 with normalizeByStd); a step group of one gives 0. Equal anchors in two prompt groups are two
 *   step groups: a state is only compared with the same task's.
 * - Each turn's advantage is A_episode + w · A_step, on every token it sampled.
 *
 * Defaults are verl-agent's (γ 0.95, w 1, mean_norm: no division by the std). One difference: verl-agent's
 * episode-level mean and std run over its batch rows, one per step, so an episode weighs as many times as it has
 * turns; here, as in GRPO, each episode counts once.
 */
import {
  type AdvantageEstimator,
  type AlgorithmSettings,
  type EpisodeTurns,
  type GroupId,
  grpoAdvantages,
  type Rows,
} from "./advantages.ts";

/** One episode as GiGPO reads it: its prompt group, its score and, per turn, the state it acted from and its reward. */
export interface GigpoEpisode {
  /** The prompt group (the episodes of one prompt share it). */
  group: GroupId;
  /** The episode's score (what GRPO compares). */
  score: number;
  /** Per turn, in order: the key of the state it acted from, and the reward it earned. */
  turns: readonly { anchor: string; reward: number }[];
}

/** Options of {@linkcode gigpoAdvantages}. */
export interface GigpoOptions {
  /** γ of the step-level returns (default 0.95). */
  gamma?: number;
  /** w, the step level's weight (default 1). */
  stepWeight?: number;
  /** Divide by the group's unbiased std + 1e-6, at both levels (default false: only centre). */
  normalizeByStd?: boolean;
}

/** GiGPO's advantages: each episode's episode-level one, and each turn's combined one. */
export interface GigpoAdvantages {
  /** Per episode: A_episode. */
  episode: number[];
  /** Per episode, per turn: A_episode + w · A_step. */
  turns: number[][];
}

const EPSILON = 1e-6;

/** Both levels apart, with each turn's step-group size (for the run's metrics). */
interface GigpoParts {
  episode: number[];
  /** Per episode, per turn: A_step (before the weight). */
  step: number[][];
  /** Per episode, per turn: how many turns its step group holds. */
  sizes: number[][];
  /** How many step groups there are. */
  groups: number;
}

/** Centred (and with `byStd` scaled) values; a single value gives 0, equal values exactly 0. */
function relative(xs: readonly number[], byStd: boolean): number[] {
  if (xs.length < 2) return xs.map(() => 0);
  let s = 0;
  for (const x of xs) s += x - xs[0];
  const mu = xs[0] + s / xs.length;
  if (!byStd) return xs.map((x) => x - mu);
  const sigma = Math.sqrt(xs.reduce((a, x) => a + (x - mu) ** 2, 0) / (xs.length - 1));
  return xs.map((x) => (x - mu) / (sigma + EPSILON));
}

/** R_t = r_t + γ · R_{t+1}, from the last turn back. */
function discountedReturns(rewards: readonly number[], gamma: number): number[] {
  const out = new Array<number>(rewards.length);
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) out[t] = g = rewards[t] + gamma * g;
  return out;
}

function parts(episodes: readonly GigpoEpisode[], o: Required<GigpoOptions>): GigpoParts {
  if (!(o.gamma >= 0 && o.gamma <= 1)) throw new RangeError(`GiGPO's gamma must be in [0, 1], got ${o.gamma}`);
  if (!Number.isFinite(o.stepWeight)) throw new RangeError(`GiGPO's step weight must be finite, got ${o.stepWeight}`);
  const episode = grpoAdvantages(episodes.map((e) => e.score), episodes.map((e) => e.group), {
    normalizeByStd: o.normalizeByStd,
    epsilon: EPSILON,
  });
  const step = episodes.map((e) => new Array<number>(e.turns.length).fill(0));
  const sizes = episodes.map((e) => new Array<number>(e.turns.length).fill(1));
  // Prompt group -> anchor -> its turns as [episode, turn].
  const byGroup = new Map<GroupId, Map<string, [number, number][]>>();
  episodes.forEach((e, i) => {
    const returns = discountedReturns(e.turns.map((t) => t.reward), o.gamma);
    const anchors = byGroup.get(e.group) ?? byGroup.set(e.group, new Map()).get(e.group)!;
    e.turns.forEach((turn, t) => {
      const members = anchors.get(turn.anchor) ?? anchors.set(turn.anchor, []).get(turn.anchor)!;
      members.push([i, t]);
      step[i][t] = returns[t];
    });
  });
  let groups = 0;
  for (const anchors of byGroup.values()) {
    for (const members of anchors.values()) {
      groups++;
      const a = relative(members.map(([i, t]) => step[i][t]), o.normalizeByStd);
      members.forEach(([i, t], k) => {
        step[i][t] = a[k];
        sizes[i][t] = members.length;
      });
    }
  }
  return { episode, step, sizes, groups };
}

function resolved(options: GigpoOptions): Required<GigpoOptions> {
  return {
    gamma: options.gamma ?? 0.95,
    stepWeight: options.stepWeight ?? 1,
    normalizeByStd: options.normalizeByStd ?? false,
  };
}

/**
 * GiGPO's advantages on plain arrays (see the module header): each episode's episode-level advantage, and each turn's
 * A_episode + w · A_step.
 *
 * @example
 * ```ts
 * gigpoAdvantages([
 *   { group: 0, score: 1, turns: [{ anchor: "s0", reward: 0 }, { anchor: "s1", reward: 1 }] },
 *   { group: 0, score: 0, turns: [{ anchor: "s0", reward: 0 }, { anchor: "s2", reward: 0 }] },
 * ]);
 * // { episode: [0.5, -0.5], turns: [[0.975, 0.5], [-0.975, -0.5]] }: R = 0.95 and 0 from s0, centred ±0.475
 * ```
 */
export function gigpoAdvantages(episodes: readonly GigpoEpisode[], options: GigpoOptions = {}): GigpoAdvantages {
  const o = resolved(options);
  const p = parts(episodes, o);
  return { episode: p.episode, turns: p.step.map((row, i) => row.map((a) => p.episode[i] + o.stepWeight * a)) };
}

/** algorithm.gigpo as the entry reads it; a TypeError naming the keys when the settings lack them. */
function gigpoSettings(s: AlgorithmSettings): Required<GigpoOptions> {
  const g = s.gigpo as Record<string, unknown> | undefined;
  if (
    typeof g?.gamma !== "number" || typeof g.step_weight !== "number" || typeof g.normalize_by_std !== "boolean"
  ) {
    throw new TypeError(
      `gigpo reads algorithm.gigpo.gamma, step_weight and normalize_by_std; got ${JSON.stringify(s.gigpo)}`,
    );
  }
  return { gamma: g.gamma, stepWeight: g.step_weight, normalizeByStd: g.normalize_by_std };
}

/** Each turn's advantage on the tokens of its span, 0 elsewhere. */
function spread(turns: EpisodeTurns, values: readonly number[], mask: Rows[number]): number[] {
  const row = new Array<number>(mask.length).fill(0);
  turns.spans.forEach(([start, end], k) => {
    if (!(start >= 0 && start < end && end <= mask.length)) {
      throw new RangeError(`Turn ${k}'s tokens [${start}, ${end}) are not within the response's ${mask.length}`);
    }
    for (let j = start; j < end; j++) if (mask[j] !== 0) row[j] = values[k];
  });
  return row;
}

/**
 * The step's numbers: the share of turns in a step group of more than one, the mean step-group size, and the step
 * level's share of the advantage (Σ|w·A_step| over Σ(|A_episode| + |w·A_step|) over the turns; absent when every
 * advantage is 0, as then there is no share to tell).
 */
function stepMetrics(p: GigpoParts, w: number): Record<string, number> {
  const sizes = p.sizes.flat();
  if (sizes.length === 0) return {};
  let fromStep = 0, all = 0;
  p.step.forEach((row, i) =>
    row.forEach((a) => {
      fromStep += Math.abs(w * a);
      all += Math.abs(p.episode[i]) + Math.abs(w * a);
    })
  );
  return {
    gigpo_turns_grouped: sizes.filter((n) => n > 1).length / sizes.length,
    gigpo_step_group_size: sizes.length / p.groups,
    ...(all > 0 ? { gigpo_step_advantage_share: fromStep / all } : {}),
  };
}

/** GiGPO's entry in the advantage estimators' table (estimators.ts). */
export const gigpo: AdvantageEstimator = {
  name: "gigpo",
  summary: "GiGPO: GRPO's episode advantage plus each turn's discounted return against the turns from the same state",
  keys: ["algorithm.gigpo.gamma", "algorithm.gigpo.step_weight", "algorithm.gigpo.normalize_by_std"],
  turns: true,
  estimate(x, s) {
    const turns = x.turns;
    if (!turns) throw new RangeError("GiGPO's advantages need each episode's turns (EstimatorInput.turns)");
    if (turns.length !== x.scores.length) {
      throw new TypeError(`gigpo: ${turns.length} episodes' turns but ${x.scores.length} scores`);
    }
    const episodes = turns.map((e, i): GigpoEpisode => {
      if (e.rewards.length !== e.spans.length || e.anchors.length !== e.spans.length) {
        throw new TypeError(
          `gigpo: episode ${i} has ${e.spans.length} turns' tokens, ${e.rewards.length} rewards and ` +
            `${e.anchors.length} anchors`,
        );
      }
      return {
        group: x.groups[i],
        score: x.scores[i],
        turns: e.anchors.map((anchor, k) => ({ anchor, reward: e.rewards[k] })),
      };
    });
    const o = gigpoSettings(s);
    const p = parts(episodes, o);
    return {
      advantages: turns.map((e, i) => spread(e, p.step[i].map((a) => p.episode[i] + o.stepWeight * a), x.masks[i])),
      metrics: stepMetrics(p, o.stepWeight),
    };
  },
};
