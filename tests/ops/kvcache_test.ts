import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost } from "../../src/gpu/tensor.ts";
import { kvcacheWrite } from "../../src/ops/kvcache.ts";
import { ropeTable } from "../../src/ops/rope.ts";
import { ELEMENTWISE } from "../reference/check.ts";
import { checkOp } from "./check_op.ts";
import { intArray, roundF32, uniformArray } from "../reference/random.ts";
import { ropeRef } from "../reference/rope.ts";
import { noF16, noGpu, testGpu } from "../no_gpu.ts";

// Grouped queries (4 query heads over 2 key heads), odd half-width, five tokens: one parked past the cache.
const T = 5, H = 4, KV = 2, D = 10, S = 12, P = 300, theta = 1e4;
const W = KV * D;
// Rows the write must leave alone keep this value.
const SENTINEL = 7.5;

for (const dtype of ["f32", "f16"] as const) {
  Deno.test({
    name: `the KV-cache write rotates q in place and stores rotated keys and values at their rows, ${dtype} cache`,
    ignore: noGpu || (dtype === "f16" && noF16),
    fn: () => checkWrite(dtype),
  });
}

/** One write through checkOp: the caches start at SENTINEL, one token is parked past them. */
async function checkWrite(dtype: "f32" | "f16") {
  const gpu = await testGpu();
  const pos = intArray(3, T, P);
  const rows = Uint32Array.from([4, 0, S + 3, 11, 7]); // the third token is parked: not stored
  const idx = new Uint32Array(2 * T);
  idx.set(Uint32Array.from(pos));
  idx.set(rows, T);
  const table = ropeTable(gpu, theta, D, P);
  const cache = { data: new Float64Array(S * W).fill(SENTINEL), shape: [S, KV, D], dtype };
  await checkOp({
    name: `KV-cache write, ${dtype} cache`,
    inputs: {
      q: { data: roundF32(uniformArray(4, T * H * D)), shape: [T, H, D] },
      k: { data: roundF32(uniformArray(5, T * W)), shape: [T, KV, D] },
      v: { data: roundF32(uniformArray(6, T * W)), shape: [T, KV, D] },
      idx: { data: idx, shape: [2 * T], dtype: "u32" },
      kCache: cache,
      vCache: cache,
    },
    forward(batch, x) {
      kvcacheWrite(batch, { q: x.q, k: x.k, v: x.v, idx: x.idx, table, kCache: x.kCache, vCache: x.vCache });
      return { q: x.q, kCache: x.kCache, vCache: x.vCache };
    },
    reference(x) {
      const kRot = ropeRef(x.k, pos, { heads: KV, stride: KV, D, theta });
      const kCache = Float64Array.from(x.kCache), vCache = Float64Array.from(x.vCache);
      rows.forEach((row, t) => {
        if (row >= S) return;
        kCache.set(kRot.subarray(t * W, (t + 1) * W), row * W);
        vCache.set(x.v.subarray(t * W, (t + 1) * W), row * W);
      });
      return { q: ropeRef(x.q, pos, { heads: H, stride: H, D, theta }), kCache, vCache };
    },
    tol: { q: ELEMENTWISE.f32, kCache: ELEMENTWISE[dtype], vCache: ELEMENTWISE[dtype] },
  });
}

Deno.test({
  name: "the KV-cache write refuses shapes that do not fit, naming them",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const table = ropeTable(gpu, theta, D, P);
    const t = (n: number, shape: number[]) => fromHost(gpu, new Float32Array(n), shape);
    const idx = fromHost(gpu, new Uint32Array(2 * T), [2 * T], "u32");
    const base = { q: t(T * H * D, [T, H, D]), k: t(T * W, [T, KV, D]), v: t(T * W, [T, KV, D]), idx, table };
    const cache = (rows: number) => t(rows * W, [rows, KV, D]);
    assert.throws(
      () => kvcacheWrite(new Batch(gpu), { ...base, kCache: cache(S), vCache: cache(S + 1) }),
      /does not fit caches \[12,2,10\] and \[13,2,10\]/,
    );
    assert.throws(
      () => kvcacheWrite(new Batch(gpu), { ...base, v: t(T * D, [T, 1, D]), kCache: cache(S), vCache: cache(S) }),
      /v \[5,1,10\]/,
    );
  },
});
