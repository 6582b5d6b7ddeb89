import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost } from "../../src/gpu/tensor.ts";
import { kvcacheWrite } from "../../src/ops/kvcache.ts";
import { ropeTable } from "../../src/ops/rope.ts";
import { assertClose, ELEMENTWISE } from "../reference/check.ts";
import { intArray, uniformArray } from "../reference/random.ts";
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

async function checkWrite(dtype: "f32" | "f16") {
  const gpu = await testGpu();
  const pos = intArray(3, T, P);
  const rows = Uint32Array.from([4, 0, S + 3, 11, 7]); // the third token is parked: not stored
  const q = uniformArray(4, T * H * D), k = uniformArray(5, T * KV * D), v = uniformArray(6, T * KV * D);
  const qRef = ropeRef(q, pos, { heads: H, stride: H, D, theta });
  const kRot = ropeRef(k, pos, { heads: KV, stride: KV, D, theta });
  const kRef = new Float64Array(S * W).fill(SENTINEL), vRef = new Float64Array(S * W).fill(SENTINEL);
  rows.forEach((row, t) => {
    if (row >= S) return;
    kRef.set(kRot.subarray(t * W, (t + 1) * W), row * W);
    vRef.set(v.subarray(t * W, (t + 1) * W), row * W);
  });
  const table = ropeTable(gpu, theta, D, P);
  const idx = new Uint32Array(2 * T);
  idx.set(Uint32Array.from(pos));
  idx.set(rows, T);
  const tq = fromHost(gpu, q, [T, H, D]);
  const caches = [0, 1].map(() => fromHost(gpu, new Float64Array(S * W).fill(SENTINEL), [S, KV, D], dtype));
  const batch = new Batch(gpu);
  kvcacheWrite(batch, {
    q: tq,
    k: fromHost(gpu, k, [T, KV, D]),
    v: fromHost(gpu, v, [T, KV, D]),
    idx: fromHost(gpu, idx, [2 * T], "u32"),
    table,
    kCache: caches[0],
    vCache: caches[1],
  });
  const [gq, gk, gv] = await batch.read([tq, ...caches]);
  assertClose(`q ${dtype}`, gq, qRef, ELEMENTWISE.f32);
  assertClose(`k cache ${dtype}`, gk, kRef, ELEMENTWISE[dtype]);
  assertClose(`v cache ${dtype}`, gv, vRef, ELEMENTWISE[dtype]);
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
