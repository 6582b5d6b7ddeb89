/**
 * Advantage estimators on plain arrays: GRPO (unbiased group std, ε = 1e-6, a singleton group taken as mean 0 and
 * std 1), RLOO, REINFORCE++ and GAE, as verl computes them with AgentGym-RL's multi-turn corrections.
 *
 * Shapes. B sequences. Sequence-level inputs (`scores`, `groups`) are arrays of length B. Token-level inputs are
 * rows: B arrays, row i holding the per-token values of sequence i's response (ragged lengths allowed), each with a
 * mask row of the same length (1 = token the policy sampled and trains on, 0 = observation or padding).
 *
 * Token-level conventions: the outcome reward sits on the last mask-1 token ({@linkcode outcomeRewards}); a nonzero
 * reward on a mask-0 token is refused rather than silently lost (there it would take no part in GAE or
 * reward-to-go, so the turns before it get no credit). Reward-to-go and GAE run over
 * the compressed subsequence of mask-1 tokens: one discount step per trainable transition, observations contribute
 * nothing. Every token-level output is 0 where the mask is 0.
 *
 * Each estimator is registered by name in estimators.ts, one entry a file (grpo.ts, gae.ts, ...), of the shape
 * AdvantageEstimator (below); GiGPO's math, which credits each turn, is its own file's (gigpo.ts).
 */
import type { Registered } from "./registry.ts";

/** Identifies the prompt a sample was drawn for: samples of one prompt share it, or GRPO compares the wrong groups. */
export type GroupId = string | number;

/** Per-token values of B sequences, one (ragged) row per sequence. */
export type Rows = readonly (readonly number[] | ArrayLike<number>)[];

function checkLengths(name: string, a: { length: number }, b: { length: number }): void {
  if (a.length !== b.length) throw new TypeError(`${name}: ${a.length} values but ${b.length} sequences`);
}

function checkRows(name: string, rows: Rows, masks: Rows): void {
  checkLengths(name, rows, masks);
  rows.forEach((r, i) => {
    if (r.length !== masks[i].length) {
      throw new TypeError(`${name}: row ${i} has ${r.length} values but its mask has ${masks[i].length}`);
    }
  });
}

/** Indices of each group, in first-seen order. */
function groupMembers(groups: readonly GroupId[]): number[][] {
  const byId = new Map<GroupId, number[]>();
  groups.forEach((g, i) => {
    const members = byId.get(g);
    if (members) members.push(i);
    else byId.set(g, [i]);
  });
  return [...byId.values()];
}

/** Mean shifted by the first value: exact for equal values, so an all-equal group gets advantage exactly 0. */
function shiftedMean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x - xs[0];
  return xs[0] + s / xs.length;
}

/** Options of {@linkcode grpoAdvantages}. */
export interface GrpoOptions {
  /** Divide by the group's std (default true); false is the Dr. GRPO setting. */
  normalizeByStd?: boolean;
  /** Added to the std before dividing (default 1e-6). */
  epsilon?: number;
}

/**
 * GRPO outcome advantage per sequence: A_i = (s_i − μ_g) / (σ_g + ε), with μ_g and the unbiased (n − 1) std σ_g
 * over the sequences of i's group. A singleton group uses (μ, σ) = (0, 1); a group of equal scores gets 0.
 *
 * @example
 * ```ts
 * grpoAdvantages([1, 0, 5], ["a", "a", "b"]); // [0.7071, -0.7071, 4.999995]
 * ```
 */
export function grpoAdvantages(
  scores: readonly number[],
  groups: readonly GroupId[],
  options: GrpoOptions = {},
): number[] {
  checkLengths("grpoAdvantages", scores, groups);
  const byStd = options.normalizeByStd ?? true;
  const eps = options.epsilon ?? 1e-6;
  const out = new Array<number>(scores.length);
  for (const members of groupMembers(groups)) {
    const s = members.map((i) => scores[i]);
    let mu = 0, sigma = 1;
    if (s.length > 1) {
      mu = shiftedMean(s);
      sigma = Math.sqrt(s.reduce((acc, x) => acc + (x - mu) ** 2, 0) / (s.length - 1));
    }
    members.forEach((i, k) => out[i] = byStd ? (s[k] - mu) / (sigma + eps) : s[k] - mu);
  }
  return out;
}

/**
 * RLOO advantage per sequence: A_i = s_i − mean_{j≠i} s_j over i's group (= n/(n−1)·(s_i − μ_g)). A singleton
 * group has no other sample: A_i = s_i.
 *
 * @example
 * ```ts
 * rlooAdvantages([1, 0, 0], [7, 7, 7]); // [1, -0.5, -0.5]
 * ```
 */
export function rlooAdvantages(scores: readonly number[], groups: readonly GroupId[]): number[] {
  checkLengths("rlooAdvantages", scores, groups);
  const out = new Array<number>(scores.length);
  for (const members of groupMembers(groups)) {
    const n = members.length;
    for (const i of members) {
      if (n === 1) {
        out[i] = scores[i];
        continue;
      }
      // mean_{j≠i}(s_i − s_j): exactly 0 for equal scores.
      let s = 0;
      for (const j of members) if (j !== i) s += scores[i] - scores[j];
      out[i] = s / (n - 1);
    }
  }
  return out;
}

/**
 * Token rewards with each sequence's score on its last mask-1 token and 0 elsewhere. A row without a mask-1 token
 * (an empty response) gets all zeros: it has no token to credit and trains nothing.
 */
export function outcomeRewards(scores: readonly number[], masks: Rows): number[][] {
  checkLengths("outcomeRewards", scores, masks);
  return masks.map((m, i) => {
    const row = new Array<number>(m.length).fill(0);
    for (let t = m.length - 1; t >= 0; t--) {
      if (m[t] !== 0) {
        row[t] = scores[i];
        break;
      }
    }
    return row;
  });
}

/** Per-token rows A_i · m_{i,t}: a sequence-level advantage on every trainable token. */
export function broadcastAdvantages(advantages: readonly number[], masks: Rows): number[][] {
  checkLengths("broadcastAdvantages", advantages, masks);
  return masks.map((m, i) => Array.from(m, (mt) => (mt !== 0 ? advantages[i] : 0)));
}

/**
 * Masked whitening over the whole batch: (x − μ) / sqrt(σ² + ε) on mask-1 tokens, μ and the unbiased σ² over all
 * mask-1 tokens of all rows; 0 on mask-0 tokens. The mean is not added back. With fewer than two tokens σ² = 0.
 */
export function maskedWhiten(rows: Rows, masks: Rows, epsilon = 1e-8): number[][] {
  checkRows("maskedWhiten", rows, masks);
  const xs: number[] = [];
  rows.forEach((r, i) => {
    for (let t = 0; t < r.length; t++) if (masks[i][t] !== 0) xs.push(r[t]);
  });
  const mu = xs.length > 0 ? shiftedMean(xs) : 0;
  const variance = xs.length > 1 ? xs.reduce((acc, x) => acc + (x - mu) ** 2, 0) / (xs.length - 1) : 0;
  const inv = 1 / Math.sqrt(variance + epsilon);
  return rows.map((r, i) => Array.from(r, (x, t) => (masks[i][t] !== 0 ? (x - mu) * inv : 0)));
}

/** Refuses a reward the compressed recursions would drop: a nonzero reward on a mask-0 token. */
function checkRewardPlacement(name: string, rewards: Rows, masks: Rows): void {
  rewards.forEach((r, i) => {
    for (let t = 0; t < r.length; t++) {
      if (masks[i][t] === 0 && r[t] !== 0) {
        throw new RangeError(
          `${name}: sequence ${i} has reward ${r[t]} on observation token ${t}, which would be lost; ` +
            "put the outcome reward on the last mask-1 token (outcomeRewards)",
        );
      }
    }
  });
}

/** Advantages and returns per token, both 0 where the mask is 0. */
export interface TokenAdvantages {
  /** Per token: the advantage. */
  advantages: number[][];
  /** Per token: the return (GAE's critic targets; REINFORCE++'s reward-to-go). */
  returns: number[][];
}

/**
 * REINFORCE++: discounted reward-to-go G_t = r_t + γ·G_next over the mask-1 tokens only (no reset and no decay
 * across observations), returned as `returns`; advantages are the returns masked-whitened over the batch.
 *
 * @example
 * ```ts
 * const masks = [[1, 1, 0, 0, 1, 1, 0]];
 * reinforcePlusPlusAdvantages(outcomeRewards([1], masks), masks).returns; // [[1, 1, 0, 0, 1, 1, 0]]
 * ```
 */
export function reinforcePlusPlusAdvantages(
  rewards: Rows,
  masks: Rows,
  options: { gamma?: number } = {},
): TokenAdvantages {
  checkRows("reinforcePlusPlusAdvantages", rewards, masks);
  checkRewardPlacement("reinforcePlusPlusAdvantages", rewards, masks);
  const gamma = options.gamma ?? 1;
  const returns = rewards.map((r, i) => {
    const out = new Array<number>(r.length).fill(0);
    let g = 0;
    for (let t = r.length - 1; t >= 0; t--) {
      if (masks[i][t] === 0) continue;
      g = r[t] + gamma * g;
      out[t] = g;
    }
    return out;
  });
  return { advantages: maskedWhiten(returns, masks), returns };
}

/**
 * REINFORCE++ with a group baseline: A_i = s_i − μ_g (μ = 0 for a singleton group) on every mask-1 token, then
 * masked-whitened over the batch. Returns per-token rows.
 */
export function reinforceBaselineAdvantages(
  scores: readonly number[],
  groups: readonly GroupId[],
  masks: Rows,
): number[][] {
  checkLengths("reinforceBaselineAdvantages", scores, groups);
  const centred = grpoAdvantages(scores, groups, { normalizeByStd: false });
  return maskedWhiten(broadcastAdvantages(centred, masks), masks);
}

/** Options of {@linkcode gaeAdvantages}. */
export interface GaeOptions {
  /** Discount per trainable transition (default 1). */
  gamma?: number;
  /** GAE λ (default 1). */
  lambda?: number;
  /** Masked-whiten the advantages over the batch (default true); returns are always pre-whitening. */
  whiten?: boolean;
}

/**
 * GAE with a value head over the compressed mask-1 subsequence: for trainable tokens t < t' consecutive in that
 * subsequence, δ_t = r_t + γ·V_t' − V_t (V after the last one is 0) and Â_t = δ_t + γλ·Â_t'. Returns
 * R_t = Â_t + V_t before whitening; advantages are then masked-whitened unless `whiten` is false.
 *
 * @example
 * ```ts
 * const masks = [[1, 1, 0, 0, 1, 1, 0]];
 * const values = [[0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]];
 * gaeAdvantages(outcomeRewards([1], masks), values, masks, { whiten: false }).advantages;
 * // [[0.7, 0.7, 0, 0, 0.7, 0.7, 0]]
 * ```
 */
export function gaeAdvantages(rewards: Rows, values: Rows, masks: Rows, options: GaeOptions = {}): TokenAdvantages {
  checkRows("gaeAdvantages", rewards, masks);
  checkRows("gaeAdvantages (values)", values, masks);
  checkRewardPlacement("gaeAdvantages", rewards, masks);
  const gamma = options.gamma ?? 1, lambda = options.lambda ?? 1;
  const advantages: number[][] = [], returns: number[][] = [];
  rewards.forEach((r, i) => {
    const a = new Array<number>(r.length).fill(0), ret = new Array<number>(r.length).fill(0);
    let nextValue = 0, g = 0;
    for (let t = r.length - 1; t >= 0; t--) {
      if (masks[i][t] === 0) continue;
      const v = values[i][t];
      g = r[t] + gamma * nextValue - v + gamma * lambda * g;
      nextValue = v;
      a[t] = g;
      ret[t] = g + v;
    }
    advantages.push(a);
    returns.push(ret);
  });
  return { advantages: options.whiten === false ? advantages : maskedWhiten(advantages, masks), returns };
}

/**
 * One episode's agent turns, for an estimator that credits each turn (`AdvantageEstimator.turns`): turn k is the
 * response tokens `spans[k]` (a run of mask-1 tokens, [start, end)), it earned `rewards[k]`, and it acted from the
 * state `anchors[k]` (equal anchors within one prompt group are one state).
 */
export interface EpisodeTurns {
  /** Per turn: its sampled tokens' [start, end) in the response, in order, disjoint. */
  spans: readonly (readonly [number, number])[];
  /** Per turn: the reward it earned (the change in the environment's score that its step made). */
  rewards: readonly number[];
  /** Per turn: the key of the state it acted from. */
  anchors: readonly string[];
}

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
  /** Per episode: its turns' tokens, rewards and anchors; only for `turns` estimators. */
  turns?: readonly EpisodeTurns[];
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
  /** The estimator's own numbers of the step, logged with its metrics (absent: it measured none). */
  metrics?: Record<string, number>;
}

/** One advantage estimator. */
export interface AdvantageEstimator extends Registered {
  /** It needs the critic's values: the run then trains a critic (config section critic) and passes `values`. */
  readonly critic?: boolean;
  /** It credits each turn: the RL step passes `turns` (each turn's tokens, reward and anchor). */
  readonly turns?: boolean;
  /** The advantages of one step's trainable episodes. */
  estimate(x: EstimatorInput, settings: AlgorithmSettings): EstimatedAdvantages;
}
