/**
 * Trajectories: the tokens of one episode and which of them train. The response is everything after the prompt;
 * mask[j] = 1 marks a sampled token (with its sampling log-probability), 0 an observation token (log-prob 0). Each run
 * of 1s is one agent turn, in the order of `turns`.
 */
import type { EpisodeTurns } from "../rl/advantages.ts";

/** One round of an episode, for the rollout log and the report's episode browser. */
export interface TurnRecord {
  /** The assistant's text (sampled ids decoded, stop token dropped). */
  text: string;
  /** The action sent, or null when the task answered locally (e.g. two actions in one reply). */
  action: string | null;
  /** What the environment said after the action (or the task's local reply). */
  observation: string;
  /**
   * The step's reward as the environment paid it: AgentGym's servers pay the episode's score so far, so the turn's own
   * share is the change (turnRewards).
   */
  reward: number;
  /** The state the turn acted from, as its task identifies states (src/task/anchor.ts): a digest. */
  anchor: string;
}

/**
 * How an episode ended: the environment said done, the round limit, the token budget, a failed server, or a first
 * observation too long for max_prompt_length (the environment's data is not trusted to fit).
 */
export type Finish = "done" | "max_rounds" | "length" | "env_failure" | "prompt_overflow";

/** One episode's tokens, masks and outcome. */
export interface Trajectory {
  /** The task's index in its split (or in the server's tasks). */
  task: number;
  /** The prompt group: the episodes of one prompt in one step share it. */
  group: number;
  /** The episode's sampling seed. */
  seed: number;
  /** The rendered prompt's ids: instructions, acknowledgement and first observation. */
  promptIds: number[];
  /** Everything after the prompt: the agent's turns and the observations between them. */
  responseIds: number[];
  /** Per response token: 1 where the policy sampled it (it trains), 0 on observations. */
  mask: number[];
  /** Per response token: the sampler's log-probability (0 on observations). */
  logprobs: number[];
  /** The last step's reward (upstream's episode reward); null for an environment failure or a prompt overflow. */
  reward: number | null;
  /** Whether the task's success rule holds for the episode. */
  success: boolean;
  /** Environment rounds taken. */
  rounds: number;
  /** How the episode ended. */
  finish: Finish;
  /** The environment's first observation. */
  firstObservation: string;
  /** Each round: the agent's text, the action sent, the observation and reward. */
  turns: TurnRecord[];
  /**
   * What the environment said about the task when it reset (Crucible's BFCL server: the entry's id, category and
   * involved classes), which results are labelled by; absent where it said nothing.
   */
  taskInfo?: Readonly<Record<string, unknown>>;
  /** The environment's error, for an episode that ended in one. */
  error?: string;
  /**
   * The policy version that sampled it, when a cluster worker or the one-step-off sampler did (absent: the learner's
   * current weights).
   */
  version?: number;
}

/** Whether a trajectory takes part in an update: it has a reward and at least one sampled token. */
export function trainable(t: Trajectory): boolean {
  return t.reward !== null && t.finish !== "env_failure" && t.finish !== "prompt_overflow" &&
    t.mask.some((m) => m === 1);
}

/** Index of the last sampled token of the response (where the outcome reward sits), or -1. */
export function lastSampled(t: Trajectory): number {
  return t.mask.lastIndexOf(1);
}

/** The runs of mask-1 tokens, [start, end) each, in order: an episode's agent turns. */
export function turnSpans(mask: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (let j = 0; j < mask.length; j++) {
    if (mask[j] === 0) continue;
    const start = j;
    while (j < mask.length && mask[j] !== 0) j++;
    out.push([start, j]);
  }
  return out;
}

/**
 * What each turn earned. AgentGym's servers pay, with each step, the episode's score so far (the episode's reward is
 * its last step's: TextCraft's shaped progress grows step by step and a refused repeat takes from it; WebShop, BFCL and
 * upstream's TextCraft pay only on the last step), so a turn earned the change its step made to that score. A turn the
 * task answered locally (action null, e.g. TextCraft's two actions in one reply) never reached the server and earned
 * nothing; the score stays the last one the server paid.
 *
 * @example
 * ```ts
 * // TextCraft with progress_reward 0.3 and repeat_penalty 0.1: a plank crafted, a refused repeat, the goal.
 * turnRewards([{ action: "craft", reward: 0.3 }, { action: "x", reward: 0.3 }, { action: "x", reward: 0.2 },
 *   { action: "craft", reward: 1 }]); // [0.3, 0, -0.1, 0.8]
 * ```
 */
export function turnRewards(turns: readonly Pick<TurnRecord, "action" | "reward">[]): number[] {
  let score = 0;
  return turns.map((t) => {
    if (t.action === null) return 0;
    const earned = t.reward - score;
    score = t.reward;
    return earned;
  });
}

/**
 * An episode's turns as an estimator that credits each turn reads them (EstimatorInput.turns): their tokens (the
 * mask's runs of 1s), what each earned and the state each acted from. A TypeError when the runs and the turns do not
 * match one to one (a trajectory not made by the rollout).
 */
export function episodeTurns(t: Pick<Trajectory, "mask" | "turns">): EpisodeTurns {
  const spans = turnSpans(t.mask);
  if (spans.length !== t.turns.length) {
    throw new TypeError(
      `An episode has ${spans.length} runs of sampled tokens but ${t.turns.length} turns; each turn's tokens must be ` +
        "one run of mask 1, as the rollout records them",
    );
  }
  const missing = t.turns.findIndex((x) => typeof x.anchor !== "string");
  if (missing >= 0) throw new TypeError(`Turn ${missing} of an episode has no anchor (TurnRecord.anchor)`);
  return { spans, rewards: turnRewards(t.turns), anchors: t.turns.map((x) => x.anchor) };
}
