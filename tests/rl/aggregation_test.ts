import assert from "node:assert/strict";
import {
  aggregateLoss,
  aggregationTotals,
  aggregationWeights,
  LOSS_AGG_MODES,
  type LossAggMode,
} from "../../src/rl/aggregation.ts";
import { assertClose } from "../reference/check.ts";
import { Rng } from "../../src/util/random.ts";

const EXACT = { atol: 1e-12, rtol: 1e-12 };

// Three sequences: two trained tokens (and a NaN on a masked one), one, and an empty response.
const LOSSES = [[1, 2, NaN], [4], [5]];
const MASKS = [[1, 1, 0], [1], [0]];

Deno.test("the four aggregation modes by hand; masked NaN never enters the sum", () => {
  const expect: Record<LossAggMode, number> = {
    "token-mean": 7 / 3, // (1 + 2 + 4) / 3 tokens
    "seq-mean-token-sum": 3.5, // (3 + 4) / 2 non-empty sequences
    "seq-mean-token-mean": 2.75, // (1.5 + 4) / 2
    "seq-mean-token-sum-norm": 7 / 3, // (3 + 4) / C, C = longest row = 3
  };
  for (const mode of LOSS_AGG_MODES) {
    assertClose(mode, [aggregateLoss(LOSSES, MASKS, mode)], [expect[mode]], EXACT);
  }
  assertClose("scale", [aggregateLoss(LOSSES, MASKS, "seq-mean-token-sum-norm", { scale: 10 })], [0.7], EXACT);
  assert.equal(aggregateLoss([[1]], [[0]], "token-mean"), 0);
  assert.throws(() => aggregateLoss(LOSSES, MASKS, "sum" as LossAggMode), RangeError);
  assert.throws(() => aggregateLoss([[1]], [[1, 1]], "token-mean"), TypeError);
});

Deno.test("weights reproduce the aggregated loss as Σ w·ℓ", () => {
  assert.deepEqual(aggregationWeights(MASKS, "seq-mean-token-mean"), [[0.25, 0.25, 0], [0.5], [0]]);
  for (const mode of LOSS_AGG_MODES) {
    const w = aggregationWeights(MASKS, mode);
    const sum = w.flat().reduce((a, wt, i) => a + (wt === 0 ? 0 : wt * LOSSES.flat()[i]), 0);
    assertClose(mode, [sum], [aggregateLoss(LOSSES, MASKS, mode)], EXACT);
  }
});

function randomBatch(seed: number, B: number) {
  const rng = new Rng(seed);
  const masks: number[][] = [], losses: number[][] = [];
  for (let i = 0; i < B; i++) {
    const n = 1 + rng.int(12);
    // Row 3 is all observation (an empty response); others mix trained and observation tokens.
    masks.push(Array.from({ length: n }, () => (i !== 3 && rng.float() < 0.7 ? 1 : 0)));
    losses.push(Array.from({ length: n }, () => rng.uniform(-2, 2)));
  }
  return { masks, losses };
}

function splits(B: number): number[][] {
  return [[B], [3, B - 3], [1, 4, B - 5], Array(B).fill(1)];
}

Deno.test("loss is the same for one micro-batch and for any split into several (mini-batch weights)", () => {
  const B = 7;
  const { masks, losses } = randomBatch(11, B);
  const totals = aggregationTotals(masks);
  for (const mode of LOSS_AGG_MODES) {
    const whole = aggregateLoss(losses, masks, mode);
    const weights = aggregationWeights(masks, mode);
    for (const sizes of splits(B)) {
      let at = 0, total = 0;
      for (const size of sizes) {
        const m = masks.slice(at, at + size), l = losses.slice(at, at + size);
        // A micro-batch weighted on its own with the mini-batch's totals gets the mini-batch's weights.
        const w = aggregationWeights(m, mode, totals);
        assert.deepEqual(w, weights.slice(at, at + size), `${mode} split ${sizes}`);
        total += aggregateLoss(l, m, mode, totals);
        at += size;
      }
      assertClose(`${mode} split [${sizes}]`, [total], [whole], EXACT);
    }
  }
});

Deno.test("verl's legacy per-micro-batch normalisation would differ: the invariance test can fail", () => {
  const B = 7;
  const { masks, losses } = randomBatch(11, B);
  const whole = aggregateLoss(losses, masks, "token-mean");
  // verl's legacy path: micro = 1 trajectory, each normalised by its own tokens, then divided by GA.
  let legacy = 0;
  for (let i = 0; i < B; i++) legacy += aggregateLoss([losses[i]], [masks[i]], "token-mean") / B;
  assert.ok(Math.abs(legacy - whole) > 1e-3, `legacy ${legacy} vs global ${whole}`);
});
