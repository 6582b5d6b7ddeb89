import assert from "node:assert/strict";
import { checkSchedule, roundsAt, scheduleOf } from "../../src/rl/rounds.ts";

Deno.test("ScalingInter with K = 100 and [10, 20, 30]: steps 1-100 use 10, 101-200 use 20, 201 on use 30", () => {
  const s = { type: "scaling_inter" as const, rounds: [10, 20, 30], stepsPerStage: 100 };
  const at = (step: number) => roundsAt(s, step);
  assert.deepEqual([1, 100, 101, 200, 201, 5000].map(at), [10, 10, 20, 20, 30, 30]);
  // Derived from the step alone: a run resumed at step 150 takes 30 rounds at step 201, not one step late.
  assert.equal(at(201), 30);
});

Deno.test("a fixed schedule is constant, and bad schedules are refused", () => {
  assert.equal(roundsAt({ type: "fixed", rounds: 30 }, 7), 30);
  assert.throws(() => roundsAt({ type: "fixed", rounds: 30 }, 0), RangeError);
  assert.throws(
    () => checkSchedule({ type: "scaling_inter", rounds: [10, 5], stepsPerStage: 10 }),
    /must not decrease/,
  );
  assert.throws(() => checkSchedule({ type: "scaling_inter", rounds: [10], stepsPerStage: 0 }), /steps_scaling_inter/);
  assert.throws(() => checkSchedule({ type: "fixed", rounds: 0 }), RangeError);
});

Deno.test("a config's rounds_ctrl as a schedule: fixed keeps the last of its rounds, stepwise stages them", () => {
  const ctrl = { rounds: [10, 20], steps_scaling_inter: 50 };
  assert.deepEqual(scheduleOf({ type: "fixed", ...ctrl }), { type: "fixed", rounds: 20 });
  const staged = scheduleOf({ type: "scaling_inter_stepwise", ...ctrl });
  assert.deepEqual(staged, { type: "scaling_inter", rounds: [10, 20], stepsPerStage: 50 });
  assert.deepEqual([50, 51].map((s) => roundsAt(staged, s)), [10, 20]);
});
