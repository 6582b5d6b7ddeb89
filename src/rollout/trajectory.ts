/**
 * Trajectories: the tokens of one episode and which of them train. The response is everything after the prompt;
 * mask[j] = 1 marks a sampled token (with its sampling log-probability), 0 an observation token (log-prob 0).
 */

/** One round of an episode, for the rollout log and the report's episode browser. */
export interface TurnRecord {
  /** The assistant's text (sampled ids decoded, stop token dropped). */
  text: string;
  /** The action sent, or null when the task answered locally (e.g. two actions in one reply). */
  action: string | null;
  /** What the environment said after the action (or the task's local reply). */
  observation: string;
  /** The step's reward. */
  reward: number;
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
