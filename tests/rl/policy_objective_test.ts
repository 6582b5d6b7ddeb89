import assert from "node:assert/strict";
import { aggregationWeights } from "../../src/rl/aggregation.ts";
import { klPenalty } from "../../src/rl/kl.ts";
import { policySurrogate } from "../../src/rl/surrogate.ts";
import { POLICY_STATS, policyMetrics, policyObjective, type PolicyTokens } from "../../src/rl/policy_loss.ts";
import { DEFAULT_CLIP, lossOf } from "./loss_settings.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { uniformArray } from "../reference/random.ts";

const EXACT = { atol: 1e-12, rtol: 1e-10 };
const FD = { atol: 1e-8, rtol: 1e-6 };

/** T tokens in rows of 10, every fourth token masked with garbage in all its inputs. */
function tokens(seed: number, T: number): PolicyTokens & { masks: number[][] } {
  const logp = uniformArray(seed, T, -3, 0);
  const old = Float64Array.from(uniformArray(seed + 1, T, -1.2, 1.2), (d, t) => logp[t] - d);
  const masks: number[][] = [];
  for (let t = 0; t < T; t += 10) {
    masks.push(Array.from({ length: Math.min(10, T - t) }, (_, i) => ((t + i) % 4 ? 1 : 0)));
  }
  const weights = aggregationWeights(masks, "token-mean").flat();
  const x = {
    logp,
    entropy: uniformArray(seed + 2, T, 0, 3),
    oldLogp: old,
    refLogp: Float64Array.from(uniformArray(seed + 3, T, -1, 1), (d, t) => logp[t] - d),
    advantages: uniformArray(seed + 4, T, -2, 2),
    weights,
    masks,
  };
  for (let t = 0; t < T; t += 4) {
    [x.logp[t], x.oldLogp[t], x.entropy[t], x.refLogp[t]] = [NaN, -Infinity, Infinity, NaN];
  }
  return x;
}

Deno.test("policy objective: gradients w.r.t. logp and entropy match central differences of the loss", () => {
  const T = 40;
  const x = tokens(20, T);
  for (const klKind of ["low_var_kl", "k1+", "abs", "none"] as const) {
    const settings = lossOf({ clipHigh: 0.28, klKind, klCoef: 0.1, entropyCoef: 0.01 });
    const out = policyObjective(x, settings);
    const at = (logp: Float64Array, entropy: Float64Array) => policyObjective({ ...x, logp, entropy }, settings).loss;
    // Skip masked tokens (their inputs are NaN) and the straight-through kind (its gradient is not its value's).
    const live = (a: ArrayLike<number>) => Array.from(a).filter((_, t) => x.weights[t] !== 0);
    const e = Float64Array.from(x.entropy);
    if (klKind !== "k1+") {
      const probe = Float64Array.from(x.logp, (v, t) => (x.weights[t] === 0 ? 0 : v));
      const num = numericGrad(
        (lp) => at(Float64Array.from(lp, (v, t) => (x.weights[t] === 0 ? NaN : v)), e),
        probe,
        1e-6,
      );
      assertClose(`${klKind} dlogp`, live(out.dlogp), live(num), FD);
    }
    const probeH = Float64Array.from(e, (v, t) => (x.weights[t] === 0 ? 0 : v));
    const numH = numericGrad((h) => at(x.logp as Float64Array, h), probeH, 1e-6);
    assertClose(`${klKind} dentropy`, live(out.dentropy), live(numH), FD);
    assert.ok(Number.isFinite(out.loss), "masked garbage must not reach the loss");
    for (let t = 0; t < T; t += 4) assert.ok(out.dlogp[t] === 0 && out.dentropy[t] === 0, `masked token ${t}`);
  }
});

Deno.test("policy objective pieces equal the surrogate, KL and entropy aggregated with the same weights", () => {
  const T = 40;
  const x = tokens(30, T);
  const live = [...Array(T).keys()].filter((t) => x.weights[t] !== 0);
  const pick = (a: ArrayLike<number>) => live.map((t) => a[t]);
  const settings = lossOf({ klKind: "k3", klCoef: 0.05, entropyCoef: 0.02 });
  const out = policyObjective(x, settings);
  const w = pick(x.weights);
  const pg = policySurrogate(pick(x.logp), pick(x.oldLogp), pick(x.advantages), DEFAULT_CLIP).losses;
  const kl = klPenalty(pick(x.logp), pick(x.refLogp), "k3");
  const h = pick(x.entropy);
  const sum = (f: (i: number) => number) => w.reduce((a, _, i) => a + f(i), 0);
  const expected = sum((i) => w[i] * pg[i]) + 0.05 * sum((i) => w[i] * kl[i]) - 0.02 * sum((i) => w[i] * h[i]);
  assertClose("loss", [out.loss], [expected], EXACT);
  const m = policyMetrics(out.stats, settings.settings);
  assertClose("metrics loss", [m.loss], [expected], EXACT);
  assertClose("pg", [m.pgLoss], [sum((i) => w[i] * pg[i])], EXACT);
  assert.equal(m.tokens, live.length);
  assert.equal(out.stats.length, T * POLICY_STATS.length);
  // Splitting the statistics (micro-batches) sums to the same metrics.
  const S = POLICY_STATS.length;
  const split = policyMetrics([out.stats.subarray(0, 16 * S), out.stats.subarray(16 * S)], settings.settings);
  assertClose("split", Object.values(split), Object.values(m), EXACT);
  assert.ok(m.pgClipfrac > 0 && m.pgClipfrac < 1, `clip fraction ${m.pgClipfrac}`);
});
