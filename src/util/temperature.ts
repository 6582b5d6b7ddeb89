/**
 * The one rule for the temperature of log-probabilities: greedy decoding (temperature 0) has no temperature of its
 * own, so a greedy token's log-probability, and an update's over greedy samples, are those of softmax(logits), as at
 * temperature 1. The GPU sampler (src/ops/sample.ts), the ONNX engine's sampler (src/onnx/pick.ts) and the RL
 * update (src/train/rl_step.ts) all read it here.
 */

/**
 * The temperature log-probabilities are computed at when sampling at `temperature` (≥ 0): itself, or 1 when greedy.
 *
 * @example
 * ```ts
 * logprobTemperature(0.7); // 0.7
 * logprobTemperature(0); // 1
 * ```
 */
export function logprobTemperature(temperature: number): number {
  return temperature === 0 ? 1 : temperature;
}
