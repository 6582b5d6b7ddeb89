// Every backward reference of the elementwise and row-wise kernels against central finite differences of its own
// forward reference. No GPU needed.
import { embeddingBackwardRef, embeddingRef } from "./embedding.ts";
import { assertClose } from "./check.ts";
import { dot, numericGrad } from "./finite_diff.ts";
import { logprobBackwardRef, logprobRef } from "./logprob.ts";
import { intArray, uniformArray } from "./random.ts";
import { rmsnormBackwardRef, rmsnormRef } from "./rmsnorm.ts";
import { ropeRef } from "./rope.ts";
import { swigluBackwardRef, swigluRef } from "./swiglu.ts";

// Central differences in f64 with h = 1e-5 have truncation error O(h²) and rounding error O(1e-16 / h).
const FD = { atol: 1e-7, rtol: 1e-6 };

Deno.test("rmsnorm backward reference matches finite differences in the input and the weight", () => {
  const C = 7, T = 3, eps = 1e-6;
  const r = uniformArray(1, T * C, -2, 2);
  const w = uniformArray(2, C, 0.5, 1.5);
  const dy = uniformArray(3, T * C);
  const { dr, dw } = rmsnormBackwardRef(r, w, dy, eps);
  assertClose("dr", dr, numericGrad((x) => dot(dy, rmsnormRef(x, w, eps).y), r), FD);
  assertClose("dw", dw, numericGrad((x) => dot(dy, rmsnormRef(r, x, eps).y), w), FD);
});

Deno.test("embedding backward reference matches finite differences in the table", () => {
  const V = 5, C = 3;
  const ids = [4, 1, 4, 0];
  const table = uniformArray(4, V * C);
  const dOut = uniformArray(5, ids.length * C);
  const got = embeddingBackwardRef(ids, dOut, new Float64Array(V * C), C);
  assertClose("dE", got, numericGrad((x) => dot(dOut, embeddingRef(ids, x, C)), table), FD);
});

Deno.test("rope backward (rotation by -angle) matches finite differences of the forward", () => {
  const o = { heads: 2, stride: 3, D: 6, theta: 10000 };
  const pos = [0, 5, 17];
  const x = uniformArray(6, pos.length * o.stride * o.D);
  const dy = uniformArray(7, x.length);
  const back = ropeRef(dy, pos, { ...o, sign: -1 });
  assertClose("dx", back, numericGrad((v) => dot(dy, ropeRef(v, pos, o)), x), FD);
});

Deno.test("swiglu backward reference matches finite differences in the gate and the up input", () => {
  const n = 15;
  const g = uniformArray(8, n, -3, 3);
  const u = uniformArray(14, n, -3, 3);
  const dh = uniformArray(9, n);
  const { dg, du } = swigluBackwardRef(g, u, dh);
  assertClose("dg", dg, numericGrad((x) => dot(dh, swigluRef(x, u)), g), FD);
  assertClose("du", du, numericGrad((x) => dot(dh, swigluRef(g, x)), u), FD);
});

Deno.test("log-softmax backward reference matches finite differences of logp and entropy, with temperature", () => {
  const V = 11, N = 3, temperature = 0.7;
  const logits = uniformArray(10, N * V, -3, 3);
  const target = intArray(11, N, V);
  const dlogp = uniformArray(12, N);
  const dent = uniformArray(13, N);
  const f = (x: Float64Array) => {
    const r = logprobRef(x, target, V, temperature);
    return dot(dlogp, r.logp) + dot(dent, r.entropy);
  };
  assertClose("dlogits", logprobBackwardRef(logits, target, dlogp, dent, V, temperature), numericGrad(f, logits), FD);
});
