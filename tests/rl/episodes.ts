/** Finished episodes of one prompt group for the advantage tests: a reward and a response mask each. */
import type { Trajectory } from "../../src/rollout/trajectory.ts";

/** An episode of group 0 that ended `done` after one round, its reward `reward` and its response tokens `mask`. */
export function episode(reward: number, mask: number[]): Trajectory {
  return {
    task: 0,
    group: 0,
    seed: 0,
    promptIds: [1],
    responseIds: mask.map((_, i) => 2 + i),
    mask,
    logprobs: mask.map((m) => (m ? -1 : 0)),
    reward,
    success: reward > 0,
    rounds: 1,
    finish: "done",
    firstObservation: "",
    turns: [],
  };
}
