import assert from "node:assert/strict";
import { cacheRanges, packedCausalRanges, rangeFacts } from "../../src/ops/attention_ranges.ts";
import { attentionBackwardRef, attentionForwardRef, type AttentionRef } from "./attention.ts";
import { assertClose } from "./check.ts";
import { dot, numericGrad } from "./finite_diff.ts";
import { uniformArray } from "./random.ts";

// GQA with two query heads per kv head; two packed sequences of unequal length and one padding row.
const H = 4, KV = 2, D = 3;
const ranges = packedCausalRanges([3, 2], { padTo: 6 });
const T = 6, S = 6;

type Inputs = AttentionRef & { q: Float64Array; k: Float64Array; v: Float64Array; dO: Float64Array };

function inputs(): Inputs {
  return {
    q: uniformArray(1, T * H * D, -2, 2),
    k: uniformArray(2, S * KV * D, -2, 2),
    v: uniformArray(3, S * KV * D),
    dO: uniformArray(4, T * H * D),
    kvStart: ranges.kvStart,
    kvEnd: ranges.kvEnd,
    T,
    S,
    H,
    KV,
    D,
    scale: 0.7,
  };
}

Deno.test("packed causal ranges: causal within each sequence, padding attends to nothing", () => {
  const r = packedCausalRanges([3, 1, 2], { padTo: 7 });
  assert.deepEqual([...r.kvStart], [0, 0, 0, 3, 4, 4, 6]);
  assert.deepEqual([...r.kvEnd], [1, 2, 3, 4, 5, 6, 6]);
  assert.deepEqual([...r.qStart], [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual([...r.qEnd], [3, 3, 3, 4, 6, 6, 6]);
  assert.throws(() => packedCausalRanges([3, 2], { padTo: 4 }), RangeError);
  const c = cacheRanges([0, 2], [4, 0], 16);
  assert.deepEqual([...c.kvStart], [0, 32]);
  assert.deepEqual([...c.kvEnd], [5, 33]);
  assert.throws(() => cacheRanges([0], [16], 16), RangeError);
  // Facts for the kernel choice: the longest range, and how many sequences the queries sit in.
  assert.deepEqual(rangeFacts(r.kvStart, r.kvEnd), { longest: 3, starts: 4 }); // padding starts its own
  assert.deepEqual(rangeFacts(c.kvStart, c.kvEnd), { longest: 5, starts: 2 });
  assert.deepEqual(rangeFacts([7], [7]), { longest: 1, starts: 1 });
});

Deno.test("attention forward reference: rows are softmax averages of v, sequences do not see each other", () => {
  const r = inputs();
  const { o, lse } = attentionForwardRef(r);
  // Token 0 sees only key 0: its output is v_0 of its kv head, and lse its own score.
  for (let h = 0; h < H; h++) {
    const kvh = Math.floor(h / (H / KV));
    for (let d = 0; d < D; d++) assert.ok(Math.abs(o[h * D + d] - r.v[kvh * D + d]) < 1e-12);
    let s = 0;
    for (let d = 0; d < D; d++) s += r.q[h * D + d] * r.k[kvh * D + d];
    assert.ok(Math.abs(lse[h] - 0.7 * s) < 1e-12);
  }
  // The padding row gives zeros.
  for (let i = 5 * H * D; i < T * H * D; i++) assert.equal(o[i], 0);
  // The second sequence alone gives the same rows as inside the pack.
  const alone = attentionForwardRef({
    ...r,
    q: r.q.slice(3 * H * D, 5 * H * D),
    k: r.k.slice(3 * KV * D, 5 * KV * D),
    v: r.v.slice(3 * KV * D, 5 * KV * D),
    kvStart: [0, 0],
    kvEnd: [1, 2],
    T: 2,
    S: 2,
  });
  assertClose("second sequence alone", o.slice(3 * H * D, 5 * H * D), alone.o, { atol: 1e-14, rtol: 1e-12 });
});

Deno.test("attention backward reference agrees with central finite differences (GQA, packed, padding)", () => {
  const r = inputs();
  const { dq, dk, dv } = attentionBackwardRef(r);
  const loss = (patch: Partial<AttentionRef>) => dot(r.dO, attentionForwardRef({ ...r, ...patch }).o);
  const tol = { atol: 1e-8, rtol: 1e-6 };
  assertClose("dq", dq, numericGrad((q) => loss({ q }), Float64Array.from(r.q)), tol);
  assertClose("dk", dk, numericGrad((k) => loss({ k }), Float64Array.from(r.k)), tol);
  assertClose("dv", dv, numericGrad((v) => loss({ v }), Float64Array.from(r.v)), tol);
  // Padding rows get no gradient; every key row of a sequence is reached by some query.
  for (let i = 5 * H * D; i < T * H * D; i++) assert.equal(dq[i], 0);
  for (let i = 5 * KV * D; i < S * KV * D; i++) assert.equal(dk[i], 0);
});
