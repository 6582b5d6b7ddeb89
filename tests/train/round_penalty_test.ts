// algorithm.round_penalty: a success scores less for each round it took, in the advantages only. Hand-worked GRPO
// numbers (unbiased std, as ../shared/spec/rl.md computes it), failures untouched, and the config's bound.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import type { Trajectory } from "../../src/rollout/trajectory.ts";
import { advantageScore, tokenAdvantages } from "../../src/train/rl_step.ts";

function episode(group: number, success: boolean, rounds: number, finish: Trajectory["finish"]): Trajectory {
  return {
    task: group,
    group,
    seed: 0,
    promptIds: [1, 2],
    responseIds: [3, 4, 5],
    mask: [1, 0, 1],
    logprobs: [-1, 0, -1],
    reward: success ? 1 : 0,
    success,
    rounds,
    finish,
    firstObservation: "",
    turns: [],
  };
}

const config = (overrides: string[]) => resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, overrides);

Deno.test("round_penalty: a success loses the penalty per round, a failure keeps its reward", () => {
  const c = config(["algorithm.round_penalty=0.015"]);
  assert.equal(advantageScore(c, episode(0, true, 4, "done")), 1 - 0.06);
  assert.equal(advantageScore(c, episode(0, false, 20, "max_rounds")), 0);
  assert.equal(advantageScore(c, episode(0, false, 3, "length")), 0);
  assert.equal(advantageScore(config([]), episode(0, true, 5, "done")), 1);
});

Deno.test("round_penalty: GRPO tells apart a group of successes by their rounds, and not a group of failures", () => {
  const group = [episode(0, true, 4, "done"), episode(0, true, 4, "done"), episode(0, true, 4, "done")];
  const slow = episode(0, true, 6, "done");
  const failures = [episode(1, false, 20, "max_rounds"), episode(1, false, 7, "length")];
  const train = [...group, slow, ...failures];
  // Scores 0.96, 0.96, 0.96 and 0.94: GRPO centres them on their mean and divides by their unbiased std.
  const scores = [0.96, 0.96, 0.96, 0.94];
  const mean = scores.reduce((a, b) => a + b) / 4;
  const std = Math.sqrt(scores.reduce((a, x) => a + (x - mean) ** 2, 0) / 3);
  const a = tokenAdvantages(config(["algorithm.round_penalty=0.01"]), train);
  for (let i = 0; i < 4; i++) {
    const want = (scores[i] - mean) / (std + 1e-6);
    assert.ok(Math.abs(a[i][0] - want) < 1e-9, `episode ${i}: ${a[i][0]} against ${want}`);
    assert.equal(a[i][1], 0, "an observation token has no advantage");
  }
  assert.ok(a[3][0] < -1.4 && a[0][0] > 0.4, "the slow success is pushed down, the quick ones up");
  assert.deepEqual([a[4], a[5]], [[0, 0, 0], [0, 0, 0]], "failures of different lengths stay equal");
  const off = tokenAdvantages(config([]), train);
  assert.ok(off.every((row) => row.every((x) => x === 0)), "without the penalty both groups have equal rewards");
});

Deno.test("round_penalty: over half a success's reward at the largest round limit is refused, naming the bound", () => {
  assert.throws(
    () => config(["algorithm.round_penalty=0.05", "algorithm.rounds_ctrl.rounds=[10,20]"]),
    /algorithm\.round_penalty.*is 0\.05.*set at most 0\.025/,
  );
  assert.equal(
    config(["algorithm.round_penalty=0.025", "algorithm.rounds_ctrl.rounds=[10,20]"]).algorithm
      .round_penalty,
    0.025,
  );
});
