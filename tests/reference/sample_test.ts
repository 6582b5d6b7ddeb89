import assert from "node:assert/strict";
import { Rng } from "../../src/util/random.ts";
import { drawUniforms } from "../../src/ops/sample.ts";
import { keptRef, logprobRef, type SampleRefSettings, sampleRowRef } from "./sample.ts";

const close = (a: number, b: number, tol = 1e-12) => assert.ok(Math.abs(a - b) <= tol, `${a} != ${b}`);
const ids = (z: number[], us: number[], s: SampleRefSettings) => us.map((u) => sampleRowRef(z, u, s).id);
const keptIds = (z: number[], s: SampleRefSettings) => keptRef(z, s).kept.flatMap((k, i) => k ? [i] : []);

Deno.test("reference greedy takes the first of tied maxima, with the temperature-1 log-probability", () => {
  const z = [1, 3, 3, 2];
  const row = sampleRowRef(z, 0.99, { temperature: 0, topK: 1, topP: 0.1 });
  assert.equal(row.id, 1);
  close(row.logprob, 3 - Math.log(Math.exp(1) + 2 * Math.exp(3) + Math.exp(2)));
  assert.equal(sampleRowRef([-0, 0, -1], 0.5, { temperature: 0 }).id, 0);
  assert.equal(sampleRowRef([-Infinity, -5, -Infinity], 0.5, { temperature: 0 }).id, 1);
});

Deno.test("reference temperature scales the logits before the draw and the log-probability", () => {
  // s = [1, 0] at T = 2: p0 = e / (e + 1) = 0.7311.
  const z = [2, 0];
  assert.deepEqual(ids(z, [0, 0.73, 0.7312, 0.999], { temperature: 2 }), [0, 0, 1, 1]);
  close(sampleRowRef(z, 0.9, { temperature: 2 }).logprob, -Math.log(1 + Math.E));
  // At T = 0.5, s = [4, 0]: p0 = e^4 / (e^4 + 1) = 0.98201.
  assert.deepEqual(ids(z, [0.982, 0.9821], { temperature: 0.5 }), [0, 1]);
  close(sampleRowRef(z, 0.5, { temperature: 0.5 }).logprob, -Math.log(1 + Math.exp(-4)));
});

Deno.test("reference draw walks the kept tokens in index order: first cumulative mass above u * mass", () => {
  // p = [1/4, 1/2, 1/4]: boundaries at 0.25 and 0.75; u exactly on a boundary moves to the next token.
  const z = [0, Math.LN2, 0];
  assert.deepEqual(ids(z, [0, 0.2499, 0.25, 0.7499, 0.75, 0.9999], {}), [0, 0, 1, 1, 2, 2]);
  // -inf logits are never drawn.
  assert.deepEqual(ids([-Infinity, 0, -Infinity, 0], [0, 0.49, 0.5, 0.99], {}), [1, 1, 3, 3]);
});

Deno.test("reference top-k keeps every token tied with the k-th largest", () => {
  const z = [1, 2, 2, 0.5, 2];
  assert.deepEqual(keptIds(z, { topK: 2 }), [1, 2, 4]);
  assert.deepEqual(keptIds(z, { topK: 4 }), [0, 1, 2, 4]);
  assert.deepEqual(keptIds(z, { topK: 5 }), [0, 1, 2, 3, 4]);
  assert.deepEqual(keptIds(z, { topK: 0 }), [0, 1, 2, 3, 4]);
  // Three equal kept tokens: thirds in index order.
  assert.deepEqual(ids(z, [0, 0.33, 0.34, 0.66, 0.67, 0.99], { topK: 2 }), [1, 1, 2, 2, 4, 4]);
  // The log-probability stays over the full vocabulary.
  close(sampleRowRef(z, 0.5, { topK: 2 }).logprob, logprobRef(z, 2));
});

Deno.test("reference top-p keeps the smallest top set reaching topP, ties at the threshold included", () => {
  // p = [1/2, 1/4, 1/8, 1/8] (exact powers of two through exp(log)).
  const z = [0, -1, -2, -3].map((k) => k * Math.LN2).map((x, i) => i === 3 ? -2 * Math.LN2 : x);
  assert.deepEqual(keptIds(z, { topP: 0.5 - 1e-9 }), [0]);
  assert.deepEqual(keptIds(z, { topP: 0.5 + 1e-9 }), [0, 1]);
  assert.deepEqual(keptIds(z, { topP: 0.75 - 1e-9 }), [0, 1]);
  // Past 3/4 the next group is the two tied 1/8 tokens: both kept.
  assert.deepEqual(keptIds(z, { topP: 0.75 + 1e-9 }), [0, 1, 2, 3]);
  assert.deepEqual(keptIds(z, { topP: 1 }), [0, 1, 2, 3]);
  // Ties of the top group: [0.4, 0.2, 0.2, 0.2] with topP 0.5 keeps all four.
  const flat = [0.4, 0.2, 0.2, 0.2].map(Math.log);
  assert.deepEqual(keptIds(flat, { topP: 0.5 }), [0, 1, 2, 3]);
  assert.deepEqual(keptIds(flat, { topP: 0.4 }), [0]);
  // The margin reports how close topP · mass was to a group boundary.
  close(keptRef(z, { topP: 0.74 }).margin, 0.01, 1e-12);
  // Draw among [1/2, 1/4] renormalised: boundary at u = 2/3.
  assert.deepEqual(ids(z, [0.666, 0.667], { topP: 0.7 }), [0, 1]);
});

Deno.test("reference top-p applies to the distribution renormalised after top-k", () => {
  // p = [0.1, 0.4, 0.3, 0.2]; top-k 3 keeps [.4, .3, .2] (mass .9) -> [.444, .333, .222]; top-p 0.7 keeps {1, 2}.
  const z = [0.1, 0.4, 0.3, 0.2].map(Math.log);
  assert.deepEqual(keptIds(z, { topK: 3, topP: 0.7 }), [1, 2]);
  // Without top-k, 0.4 + 0.3 = 0.7 of the full mass reaches 0.7 as well, but 0.75 would need token 3 too.
  assert.deepEqual(keptIds(z, { topP: 0.75 }), [1, 2, 3]);
  assert.deepEqual(keptIds(z, { topK: 3, topP: 0.75 }), [1, 2]);
  // Kept mass 0.7: token 1 covers u < 4/7.
  assert.deepEqual(ids(z, [0.57, 0.572], { topK: 3, topP: 0.7 }), [1, 2]);
  close(sampleRowRef(z, 0.9, { topK: 3, topP: 0.7 }).logprob, Math.log(0.3));
  // Temperature comes first: at T = 0.25 the top token alone carries over 70% of the top-k mass.
  assert.deepEqual(keptIds(z, { temperature: 0.25, topK: 3, topP: 0.7 }), [1]);
});

Deno.test("reference draws follow the kept distribution (chi-square over 20000 draws per setting)", () => {
  const p = [0.05, 0.3, 0.1, 0.2, 0.15, 0.2];
  const z = p.map(Math.log);
  const cases: [SampleRefSettings, number[]][] = [
    [{}, p],
    [{ temperature: 0.5 }, normalise(p.map((x) => x * x))],
    [{ topK: 3 }, normalise([0, 0.3, 0, 0.2, 0, 0.2])],
    [{ topP: 0.55 }, normalise([0, 0.3, 0, 0.2, 0, 0.2])],
    [{ topP: 0.29 }, [0, 1, 0, 0, 0, 0]],
    [{ temperature: 2, topK: 4, topP: 0.6 }, normalise([0, Math.sqrt(0.3), 0, Math.sqrt(0.2), 0, Math.sqrt(0.2)])],
  ];
  const rng = new Rng(2024);
  const n = 20000;
  for (const [settings, expected] of cases) {
    const counts = new Array(p.length).fill(0);
    for (const u of drawUniforms(rng, n)) counts[sampleRowRef(z, u, settings).id]++;
    let chi2 = 0;
    let df = -1;
    for (let i = 0; i < p.length; i++) {
      if (expected[i] === 0) {
        assert.equal(counts[i], 0, `${JSON.stringify(settings)}: token ${i} is filtered out but was drawn`);
        continue;
      }
      chi2 += (counts[i] - n * expected[i]) ** 2 / (n * expected[i]);
      df++;
    }
    // 99.9th percentile of chi-square with df <= 5 is at most 20.5.
    assert.ok(chi2 < 20.5, `${JSON.stringify(settings)}: chi-square ${chi2.toFixed(2)} (df ${df}), counts ${counts}`);
  }
});

function normalise(xs: number[]): number[] {
  const s = xs.reduce((a, b) => a + b, 0);
  return xs.map((x) => x / s);
}
