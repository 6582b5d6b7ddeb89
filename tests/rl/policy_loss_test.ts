import assert from "node:assert/strict";
import { KL_ESTIMATORS, type KlKind, klPenalty, klPenaltyGrad } from "../../src/rl/kl.ts";
import { resolvePolicyLoss } from "../../src/rl/policy_loss.ts";
import { type ClipSettings, policySurrogate, surrogateTerm } from "../../src/rl/surrogate.ts";
import { valueLoss } from "../../src/rl/value_loss.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { uniformArray } from "../reference/random.ts";
import { DEFAULT_CLIP, DEFAULT_LOSS } from "./loss_settings.ts";

/** verl's clip settings, which the cases below work by hand (and the config's defaults are). */
const VERL: ClipSettings = { clipLow: 0.2, clipHigh: 0.2, clipC: 3 };

const EXACT = { atol: 1e-12, rtol: 1e-12 };
// Central differences with h = 1e-6 on smooth functions of size ~1: truncation ~1e-12, rounding ~1e-10.
const FD = { atol: 1e-7, rtol: 1e-6 };

Deno.test("KL estimators by hand at d = logp − ref = −0.5, with their gradients", () => {
  const e = Math.exp(0.5);
  const cases: [KlKind, number, number][] = [
    ["k1", -0.5, 1],
    ["kl", -0.5, 1],
    ["abs", 0.5, -1],
    ["k2", 0.125, -0.5],
    ["mse", 0.125, -0.5],
    ["k3", e - 1.5, 1 - e],
    ["low_var_kl", e - 1.5, 1 - e],
  ];
  for (const [kind, value, grad] of cases) {
    assertClose(`${kind} value`, klPenalty([-1.5], [-1], kind), [value], EXACT);
    assertClose(`${kind} grad`, klPenaltyGrad([-1.5], [-1], kind), [grad], EXACT);
  }
});

Deno.test("k3 clamps: inner ±20 on the log-ratio, outer ±10 on the value, zero gradient where clamped", () => {
  // d = −30: u = 30 clamps to 20, e^20 − 21 clamps to 10. d = +30: u = −20, e^−20 + 19 clamps to 10.
  // d = −2.5: 8.68 < 10 is not clamped; d = −3: e^3 − 4 = 16.1 is.
  const logp = [-31, 29, -3.5, -4], ref = [-1, -1, -1, -1];
  const e25 = Math.exp(2.5);
  assertClose("value", klPenalty(logp, ref, "k3"), [10, 10, e25 - 3.5, 10], EXACT);
  assertClose("grad", klPenaltyGrad(logp, ref, "k3"), [0, 0, 1 - e25, 0], EXACT);
});

Deno.test("straight-through '+' kinds: the estimator's value, the k2 gradient d", () => {
  const logp = uniformArray(1, 16, -3, 0), ref = uniformArray(2, 16, -3, 0);
  const d = Array.from(logp, (l, t) => l - ref[t]);
  for (const base of KL_ESTIMATORS.names()) {
    const plus = `${base}+` as KlKind;
    assertClose(`${plus} value`, klPenalty(logp, ref, plus), klPenalty(logp, ref, base), EXACT);
    assertClose(`${plus} grad`, klPenaltyGrad(logp, ref, plus), d, EXACT);
  }
  assert.throws(() => klPenalty([0], [0], "full" as KlKind), RangeError);
});

Deno.test("KL gradients match central differences of the KL values", () => {
  // |d| ≤ 2 and away from 0: inside every clamp and off abs's kink.
  const ref = uniformArray(3, 24, -4, -1);
  const logp = Float64Array.from(uniformArray(4, 24, 0.1, 2), (x, t) => ref[t] + (t % 2 ? x : -x));
  for (const kind of ["k1", "abs", "k2", "k3"] as const) {
    const num = numericGrad((x) => klPenalty(x, ref, kind).reduce((a, b) => a + b, 0), logp, 1e-6);
    assertClose(`${kind} d/dlogp`, klPenaltyGrad(logp, ref, kind), num, FD);
  }
});

Deno.test("clipped surrogate by hand: unclipped, ratio-clipped both sides, dual clip, log-ratio clamp", () => {
  const ln = Math.log;
  const r = (logp: number, adv: number, clip: Partial<ClipSettings> = {}) =>
    surrogateTerm(logp, 0, adv, { ...VERL, ...clip });
  const e01 = Math.exp(0.1);
  // [term, loss, grad, clipped, clippedLower]
  const cases: [ReturnType<typeof r>, number, number, number, number][] = [
    [r(0.1, 1), -e01, -e01, 0, 0],
    [r(ln(1.5), 1), -1.2, 0, 1, 0], // A > 0, ρ above 1 + ε_high
    [r(ln(0.5), -1), 0.8, 0, 1, 0], // A < 0, ρ below 1 − ε_low
    [r(ln(4), -1), 3, 0, 0, 1], // A < 0, L1 = 4 > c·|A| = 3: dual clip
    [r(ln(2.5), -1), 2.5, 2.5, 0, 0], // A < 0, large ρ under the dual cap: full gradient
    [r(ln(1.25), 1, { clipHigh: 0.28 }), -1.25, -1.25, 0, 0], // clip-higher lets 1.25 through
    [r(ln(1.25), 1), -1.2, 0, 1, 0],
    [r(ln(0.85), -1, { clipLow: 0.1 }), 0.9, 0, 1, 0], // separate ε_low
    [r(ln(0.85), -1), 0.85, 0.85, 0, 0],
    [r(ln(1.3), -2, { clipC: 1.2 }), 2.4, 0, 0, 1], // c = 1.2: L1 = 2.6 > 2.4
  ];
  cases.forEach(([t, loss, grad, clipped, lower], i) => {
    assertClose(`case ${i} loss`, [t.loss], [loss], EXACT);
    assertClose(`case ${i} grad`, [t.grad], [grad], EXACT);
    assert.equal(t.clipped, clipped, `case ${i} clipped`);
    assert.equal(t.clippedLower, lower, `case ${i} clippedLower`);
  });
  // Δ = −25 clamps to −20: ρ = e^−20, L1 = −2e^−20 > L2 = −1.6 is active but the clamp stops the gradient.
  const clamped = surrogateTerm(-25, 0, 2, VERL);
  assertClose("clamped", [clamped.loss, clamped.grad, clamped.ratio], [-2 * Math.exp(-20), 0, Math.exp(-20)], EXACT);
  assert.deepEqual(DEFAULT_CLIP, VERL, "the config's defaults are verl's");
  assert.throws(() => resolvePolicyLoss({ ...DEFAULT_LOSS, clipC: 1 }), /clipC must be > 1, got 1/);
});

Deno.test("surrogate gradient matches central differences away from the clip kinks", () => {
  const n = 64;
  const logp = uniformArray(5, n, -3, 0), adv = uniformArray(6, n, -2, 2);
  const old = Float64Array.from(uniformArray(7, n, -1.4, 1.4), (d, t) => logp[t] - d);
  const clip = { clipLow: 0.2, clipHigh: 0.28, clipC: 3 };
  const { grads, terms } = policySurrogate(logp, old, adv, clip);
  const num = numericGrad((x) => policySurrogate(x, old, adv, clip).losses.reduce((a, b) => a + b, 0), logp, 1e-6);
  let checked = 0;
  const kinds = new Set<string>();
  for (let t = 0; t < n; t++) {
    const rho = terms[t].ratio;
    const nearKink = Math.abs(rho - 0.8) < 1e-3 || Math.abs(rho - 1.28) < 1e-3 ||
      Math.abs(Math.abs(adv[t]) * rho - 3 * Math.abs(adv[t])) < 1e-3;
    if (nearKink) continue;
    assertClose(`token ${t}`, [grads[t]], [num[t]], FD);
    kinds.add(terms[t].clippedLower ? "dual" : terms[t].clipped ? "clipped" : "free");
    checked++;
  }
  assert.ok(checked > 50, `only ${checked} tokens checked`);
  assert.deepEqual([...kinds].sort(), ["clipped", "dual", "free"], "every branch must be exercised");
});

Deno.test("clipped value loss by hand, its gradient, and central differences", () => {
  // V = 1, V_old = 0, R = 2: V_clip = 0.5, max(1, 2.25) → clipped branch, zero gradient.
  // V = 0.2, V_old = 0, R = 1: inside the clip range, both branches 0.64, gradient V − R = −0.8.
  // V = 1, V_old = 0, R = 0: max(1, 0.25) = 1 from the unclipped branch, gradient 1.
  const out = valueLoss([[1, 0.2], [1, 7]], [[0, 0], [0, 0]], [[2, 1], [0, 0]], [[1, 1], [1, 0]], "token-mean");
  assertClose("loss", [out.loss], [(1.125 + 0.32 + 0.5) / 3], EXACT);
  assertClose("grads", out.grads.flat(), [0, -0.8 / 3, 1 / 3, 0], EXACT);
  assertClose("clipfrac", [out.clipfrac], [1 / 3], EXACT);
  const n = 20;
  const old = uniformArray(8, n), ret = uniformArray(9, n, -2, 2), v = uniformArray(10, n, -1.5, 1.5);
  const masks = [Array.from({ length: n }, (_, t) => (t % 5 === 4 ? 0 : 1))];
  const f = (x: Float64Array) => valueLoss([x], [old], [ret], masks, "seq-mean-token-mean", { clipRange: 0.3 }).loss;
  const g = valueLoss([v], [old], [ret], masks, "seq-mean-token-mean", { clipRange: 0.3 }).grads[0];
  assertClose("d/dV", g, numericGrad(f, v, 1e-6), FD);
});
