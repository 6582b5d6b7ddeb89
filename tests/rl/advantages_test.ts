import assert from "node:assert/strict";
import {
  broadcastAdvantages,
  gaeAdvantages,
  grpoAdvantages,
  maskedWhiten,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
} from "../../src/rl/advantages.ts";
import { assertClose } from "../reference/check.ts";

// Hand-worked values in f64: only summation-order rounding separates them from the code.
const EXACT = { atol: 1e-12, rtol: 1e-12 };
const flat = (rows: number[][]) => rows.flat();

// The toy trajectory: two assistant turns, an observation between them, and a final observation (mask 1 1 0 0 1 1 0).
const TOY_MASK = [1, 1, 0, 0, 1, 1, 0];

Deno.test("GRPO: unbiased group std, epsilon, a singleton group, interleaved ids", () => {
  // Group "a" = {1, 0, 0}: μ = 1/3, σ² = (4/9 + 1/9 + 1/9) / 2 = 1/3. Group "b" = {3}: (μ, σ) = (0, 1).
  const scores = [1, 3, 0, 0], groups = ["a", "b", "a", "a"];
  const sigma = Math.sqrt(1 / 3) + 1e-6;
  assertClose("grpo", grpoAdvantages(scores, groups), [
    (2 / 3) / sigma,
    3 / (1 + 1e-6),
    (-1 / 3) / sigma,
    (-1 / 3) / sigma,
  ], EXACT);
  const eps = 0.5;
  assertClose("epsilon", grpoAdvantages([1, 0], [7, 7], { epsilon: eps }), [
    0.5 / (Math.SQRT1_2 + eps),
    -0.5 / (Math.SQRT1_2 + eps),
  ], EXACT);
});

Deno.test("GRPO without std normalisation is s − μ (Dr. GRPO), singleton μ = 0", () => {
  const a = grpoAdvantages([1, 3, 0, 0], ["a", "b", "a", "a"], { normalizeByStd: false });
  assertClose("dr grpo", a, [2 / 3, 3, -1 / 3, -1 / 3], EXACT);
});

Deno.test("GRPO and RLOO give exactly 0 to a group of equal rewards (no ε-amplified rounding)", () => {
  // 0.1 three times: a naive mean is 0.10000000000000002, which σ + ε = 1e-6 would blow up to ~2e-11.
  assert.deepEqual(grpoAdvantages([0.1, 0.1, 0.1], [0, 0, 0]), [0, 0, 0]);
  assert.deepEqual(rlooAdvantages([0.1, 0.1, 0.1], [0, 0, 0]), [0, 0, 0]);
});

Deno.test("RLOO: leave-one-out mean, singleton keeps its score", () => {
  assertClose(
    "rloo",
    rlooAdvantages([1, 0, 0, 3, 5, 1], ["p", "p", "p", "q", "r", "r"]),
    [1, -0.5, -0.5, 3, 4, -4],
    EXACT,
  );
});

Deno.test("outcome reward lands on the last mask-1 token; an empty response gets nothing", () => {
  const rows = outcomeRewards([1, 5, 2], [TOY_MASK, [0, 0], [1]]);
  assert.deepEqual(rows, [[0, 0, 0, 0, 0, 1, 0], [0, 0], [2]]);
  assert.deepEqual(broadcastAdvantages([2, 3], [[1, 0, 1], [0]]), [[2, 0, 2], [0]]);
});

Deno.test("the toy table: GAE 0.7 on trainable tokens, reward-to-go 1 on both turns", () => {
  const masks = [TOY_MASK];
  const rewards = outcomeRewards([1], masks);
  const values = [TOY_MASK.map(() => 0.3)];
  const gae = gaeAdvantages(rewards, values, masks, { gamma: 1, lambda: 1, whiten: false });
  assertClose("gae", flat(gae.advantages), [0.7, 0.7, 0, 0, 0.7, 0.7, 0], EXACT);
  assertClose("gae returns", flat(gae.returns), [1, 1, 0, 0, 1, 1, 0], EXACT);
  const rf = reinforcePlusPlusAdvantages(rewards, masks, { gamma: 1 });
  assertClose("reward-to-go", flat(rf.returns), [1, 1, 0, 0, 1, 1, 0], EXACT);
  // Whitening equal values gives 0 (not NaN): σ² = 0 plus ε.
  assertClose("whitened", flat(gaeAdvantages(rewards, values, masks).advantages), [0, 0, 0, 0, 0, 0, 0], EXACT);
});

Deno.test("a reward on an observation token (verl's and AgentGym-RL's placement) is refused, not lost", () => {
  const masks = [TOY_MASK];
  const onObs = [[0, 0, 0, 0, 0, 0, 1]];
  assert.throws(() => reinforcePlusPlusAdvantages(onObs, masks), RangeError);
  assert.throws(() => gaeAdvantages(onObs, [[0, 0, 0, 0, 0, 0, 0]], masks), RangeError);
});

Deno.test("reward-to-go discounts once per trainable transition, not across observations", () => {
  const rf = reinforcePlusPlusAdvantages(outcomeRewards([1], [TOY_MASK]), [TOY_MASK], { gamma: 0.5 });
  assertClose("returns", flat(rf.returns), [0.125, 0.25, 0, 0, 0.5, 1, 0], EXACT);
  // Whitened over the four trainable tokens {0.125, 0.25, 0.5, 1}.
  const xs = [0.125, 0.25, 0.5, 1], mu = 1.875 / 4;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mu) ** 2, 0) / 3 + 1e-8);
  const z = xs.map((x) => (x - mu) / sd);
  assertClose("advantages", flat(rf.advantages), [z[0], z[1], 0, 0, z[2], z[3], 0], EXACT);
});

Deno.test("GAE with γ = 0.9, λ = 0.5 skips the observation's value", () => {
  // mask [1, 0, 1, 1], V [0.2, 9, 0.4, 0.5], reward 1 on the last token:
  // t3: δ = 1 − 0.5 = 0.5, Â = 0.5; t2: δ = 0.9·0.5 − 0.4 = 0.05, Â = 0.05 + 0.45·0.5 = 0.275;
  // t0: δ = 0.9·0.4 − 0.2 = 0.16 (V = 9 at t1 is never read), Â = 0.16 + 0.45·0.275 = 0.28375.
  const masks = [[1, 0, 1, 1]];
  const gae = gaeAdvantages([[0, 0, 0, 1]], [[0.2, 9, 0.4, 0.5]], masks, { gamma: 0.9, lambda: 0.5, whiten: false });
  assertClose("advantages", flat(gae.advantages), [0.28375, 0, 0.275, 0.5], EXACT);
  assertClose("returns", flat(gae.returns), [0.48375, 0, 0.675, 1], EXACT);
});

Deno.test("masked whitening over the batch: unbiased variance, mask-0 values ignored and zeroed", () => {
  const w = maskedWhiten([[1, 2, 100], [3]], [[1, 1, 0], [1]]);
  const s = Math.sqrt(1 + 1e-8);
  assertClose("whiten", flat(w), [-1 / s, 0, 0, 1 / s], EXACT);
  assert.deepEqual(maskedWhiten([[5]], [[1]]), [[0]]);
  assert.throws(() => maskedWhiten([[1, 2]], [[1]]), TypeError);
});

Deno.test("REINFORCE++ with a group baseline: s − μ_g on tokens, whitened over the batch", () => {
  // Centred: a = {1, 0} → ±0.5; b singleton → 2. Tokens: 0.5, 0.5, −0.5, −0.5, 2; μ = 0.4, σ² = 4.2 / 4.
  const rows = reinforceBaselineAdvantages([1, 0, 2], ["a", "a", "b"], [[1, 1], [1, 0, 1], [1]]);
  const s = Math.sqrt(1.05 + 1e-8);
  assertClose("baseline", flat(rows), [0.1 / s, 0.1 / s, -0.9 / s, 0, -0.9 / s, 1.6 / s], EXACT);
});
