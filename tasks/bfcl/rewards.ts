/**
 * EnvTuning's rewards over an episode's per-step codes (inclusionAI/AWorld-RL, EnvTuning/env_tuning): each reply
 * gets a code, -3 a format error, -2 calls of which one failed (a result starting "Error during execution:"), -1
 * calls that all ran, and each user turn's end 0 or 1 from BFCL's checks (on a turn without ground truth: 1 for an
 * answer, 0 for a call).
 *
 * - stage 1 and 2 (`format_reward.py`): is_tool_call x [(rounds - format errors) / rounds + correct / (correct +
 *   errors)], in 0..2, and 0 when the model never called a tool (rounds: every code);
 * - stage 3 (`bfcl_reward.py`): progress, the mean of the turn-end codes (0 and 1).
 *
 * @example
 * ```ts
 * formatStageReward([-1, -2, 1, -3, 0]); // 1 * ((5 - 1) / 5 + 1 / 2) = 1.3
 * progressReward([-1, -2, 1, -3, 0]);    // (1 + 0) / 2 = 0.5
 * ```
 */

/** One reply's code. */
export type StepCode = -3 | -2 | -1 | 0 | 1;

/** Which reward an episode ends with: BFCL's pass (1 when every turn passed), or EnvTuning's stage rewards. */
export const REWARD_MODES = ["pass", "format", "progress"] as const;
export type RewardMode = typeof REWARD_MODES[number];

/** EnvTuning's stage 1 and 2 reward. */
export function formatStageReward(codes: readonly StepCode[]): number {
  const rounds = codes.length;
  const correct = codes.filter((c) => c === -1).length, errors = codes.filter((c) => c === -2).length;
  const formatErrors = codes.filter((c) => c === -3).length;
  const isToolCall = correct + errors > 0 ? 1 : 0;
  const format = rounds > 0 ? (rounds - formatErrors) / rounds : 0;
  const toolCall = isToolCall ? correct / (correct + errors) : 0;
  return isToolCall * (format + toolCall);
}

/** EnvTuning's stage 3 reward: the mean of the turn-end checks. */
export function progressReward(codes: readonly StepCode[]): number {
  const turns = codes.filter((c) => c === 0 || c === 1);
  return turns.length ? turns.reduce((a: number, c) => a + c, 0) / turns.length : 0;
}
