/** Learning-rate schedules by optimizer step: constant, linear warm-up then constant, warm-up then cosine decay. */

/** A schedule as the config writes it. */
export interface LrScheduleConfig {
  type: "constant" | "warmup" | "cosine";
  warmup_steps: number;
  min_lr_ratio: number;
}

/**
 * The learning rate of 1-based optimizer step `step` out of `total`. Warm-up ramps linearly over the first
 * `warmup_steps` steps (step 1 gets lr / warmup_steps); cosine then decays to lr · min_lr_ratio at step `total`.
 */
export function lrAt(lr: number, s: LrScheduleConfig, step: number, total: number): number {
  if (!Number.isInteger(step) || step < 1) throw new RangeError(`Optimizer steps count from 1, got ${step}`);
  if (s.type !== "constant" && step <= s.warmup_steps) return (lr * step) / s.warmup_steps;
  if (s.type !== "cosine") return lr;
  const span = Math.max(1, total - s.warmup_steps);
  const progress = Math.min(1, (step - s.warmup_steps) / span);
  const floor = lr * s.min_lr_ratio;
  return floor + (lr - floor) * 0.5 * (1 + Math.cos(Math.PI * progress));
}
