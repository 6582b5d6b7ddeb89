// The public API: the RL library functions on plain arrays that the issue names, reachable from mod.ts.
import assert from "node:assert/strict";
import { aggregateLoss, grpoAdvantages, klPenalty, rlooAdvantages } from "../mod.ts";

Deno.test("mod.ts exports the RL functions on plain arrays, each returning numbers", () => {
  assert.deepEqual(grpoAdvantages([1, 0, 1, 1], [0, 0, 1, 1]).map((x) => +x.toFixed(4)), [0.7071, -0.7071, 0, 0]);
  assert.deepEqual(rlooAdvantages([1, 0, 0], [0, 0, 0]), [1, -0.5, -0.5]);
  assert.deepEqual(klPenalty([-1], [-1], "k3"), [0]);
  assert.equal(aggregateLoss([[1, 3], [2]], [[1, 1], [1]], "token-mean"), 2);
});
