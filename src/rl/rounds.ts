/**
 * Round schedulers: the most environment rounds an episode may take at a training step. ScalingInter grows the
 * horizon in stages, h(s) = rounds[min(floor((s - 1) / K), len - 1)] for 1-based step s. The stage is derived from
 * the global step alone, so it is right after a resume (AgentGym-RL's counter runs one step late there). The config
 * schema checks a schedule (checkSchedule) when it reads algorithm.rounds_ctrl.
 */

/** A round schedule. */
export type RoundsSchedule =
  | { type: "fixed"; rounds: number }
  | { type: "scaling_inter"; rounds: readonly number[]; stepsPerStage: number };

/** The config's round control (algorithm.rounds_ctrl), as scheduleOf reads it. */
export interface RoundsControl {
  /** fixed keeps the last of `rounds`; scaling_inter_stepwise stages them (AgentGym-RL's ScalingInter). */
  type: "fixed" | "scaling_inter_stepwise";
  /** Rounds per stage; fixed keeps the last. */
  rounds: readonly number[];
  /** RL steps per stage. */
  steps_scaling_inter: number;
}

/**
 * The round schedule of a config's algorithm.rounds_ctrl.
 *
 * @example
 * ```ts
 * scheduleOf({ type: "fixed", rounds: [10, 20], steps_scaling_inter: 100 }); // { type: "fixed", rounds: 20 }
 * ```
 */
export function scheduleOf(r: RoundsControl): RoundsSchedule {
  return r.type === "fixed"
    ? { type: "fixed", rounds: r.rounds[r.rounds.length - 1] }
    : { type: "scaling_inter", rounds: r.rounds, stepsPerStage: r.steps_scaling_inter };
}

/** Rounds allowed at 1-based training step `step`. */
export function roundsAt(schedule: RoundsSchedule, step: number): number {
  if (!Number.isInteger(step) || step < 1) throw new RangeError(`Training steps count from 1, got ${step}`);
  if (schedule.type === "fixed") return schedule.rounds;
  const { rounds, stepsPerStage } = schedule;
  if (rounds.length === 0) throw new RangeError("A ScalingInter schedule needs at least one stage of rounds");
  const stage = Math.min(Math.floor((step - 1) / stepsPerStage), rounds.length - 1);
  return rounds[stage];
}

/** Checks a schedule: positive integer rounds, non-decreasing stages, a positive stage length. */
export function checkSchedule(schedule: RoundsSchedule): RoundsSchedule {
  const all = schedule.type === "fixed" ? [schedule.rounds] : [...schedule.rounds];
  for (const r of all) {
    if (!Number.isInteger(r) || r < 1) throw new RangeError(`Rounds must be positive integers, got ${r}`);
  }
  if (schedule.type === "scaling_inter") {
    if (!Number.isInteger(schedule.stepsPerStage) || schedule.stepsPerStage < 1) {
      throw new RangeError(`steps_scaling_inter must be a positive integer, got ${schedule.stepsPerStage}`);
    }
    if (all.some((r, i) => i > 0 && r < all[i - 1])) {
      throw new RangeError(`ScalingInter rounds must not decrease, got [${all.join(", ")}]`);
    }
  }
  return schedule;
}
