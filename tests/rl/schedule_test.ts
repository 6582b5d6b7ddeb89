import assert from "node:assert/strict";
import { lrAt } from "../../src/rl/schedule.ts";

Deno.test("learning-rate schedules: constant, warm-up, cosine to the floor", () => {
  const c = { type: "constant" as const, warmup_steps: 10, min_lr_ratio: 0 };
  assert.equal(lrAt(1e-3, c, 1, 100), 1e-3);
  const w = { ...c, type: "warmup" as const, warmup_steps: 4 };
  assert.deepEqual([1, 2, 4, 5, 99].map((s) => lrAt(1, w, s, 100)), [0.25, 0.5, 1, 1, 1]);
  const cos = { type: "cosine" as const, warmup_steps: 0, min_lr_ratio: 0.1 };
  assert.ok(Math.abs(lrAt(1, cos, 100, 100) - 0.1) < 1e-12);
  assert.ok(Math.abs(lrAt(1, cos, 50, 100) - (0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI * 0.5)))) < 1e-12);
  assert.ok(lrAt(1, cos, 1, 100) > 0.99);
  assert.throws(() => lrAt(1, c, 0, 10), RangeError);
});
