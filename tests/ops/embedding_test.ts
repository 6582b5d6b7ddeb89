import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { withTensorLimit } from "../../src/gpu/device.ts";
import { readStored, rowParts, storedFromHost } from "../../src/gpu/split.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { embeddingBackward, embeddingBuckets, embeddingForward } from "../../src/ops/embedding.ts";
import { assertClose } from "../reference/check.ts";
import { embeddingBackwardRef, embeddingRef } from "../reference/embedding.ts";
import { intArray, roundF16, roundF32, uniformArray } from "../reference/random.ts";
import { noF16, noGpu, testGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

Deno.test("embedding buckets group positions by id in order", () => {
  const b = embeddingBuckets([3, 1, 3, 3, 0]);
  assert.deepEqual([...b.tokens], [0, 1, 3]);
  assert.deepEqual([...b.offsets], [0, 1, 2, 5]);
  assert.deepEqual([...b.order], [4, 1, 0, 2, 3]);
});

Deno.test({
  name: "embedding forward and deterministic backward against the f64 reference",
  ignore: noGpu,
  async fn() {
    const V = 53, C = 67, T = 131; // many repeated ids: T > V
    const ids = intArray(1, T, V);
    const table = roundF32(uniformArray(2, V * C));
    // A lookup copies f32 exactly; the backward adds up to T terms of size 1 (f32 rounding per add).
    await checkOp({
      name: "embedding",
      inputs: { ids: { data: ids, shape: [T], dtype: "u32" }, table: { data: table, shape: [V, C] } },
      forward(batch, x) {
        const out = zeros(batch.gpu, [T, C]);
        embeddingForward(batch, x.ids, x.table, out);
        return { out };
      },
      reference: (x) => ({ out: embeddingRef(x.ids, x.table, C) }),
      backward: {
        upstream: { out: uniformArray(3, T * C) },
        gpu(batch, _x, dy) {
          const dE = zeros(batch.gpu, [V, C]);
          embeddingBackward(batch, embeddingBuckets(ids), dy.out, dE);
          return { table: dE };
        },
        reference: (x, dy) => ({ table: embeddingBackwardRef(x.ids, dy.out, new Float64Array(V * C), C) }),
      },
      tol: { out: { atol: 0, rtol: 0 }, dtable: { atol: 1e-5, rtol: 1e-5 } },
    });
  },
});

Deno.test({
  name: "embedding forward from an f16 table copies the halves exactly",
  ignore: noGpu || noF16,
  async fn() {
    const gpu = await testGpu();
    const V = 53, C = 67, T = 131;
    const ids = intArray(1, T, V);
    const half = roundF16(uniformArray(2, V * C));
    const tIds = fromHost(gpu, ids, [T], "u32"), t16 = fromHost(gpu, half, [V, C], "f16"), out16 = zeros(gpu, [T, C]);
    const batch = new Batch(gpu);
    embeddingForward(batch, tIds, t16, out16);
    const [got] = await batch.read([out16]);
    assertClose("forward f16", got, embeddingRef(ids, half, C), { atol: 0, rtol: 0 });
    for (const t of [tIds, t16, out16]) t.release();
  },
});

Deno.test({
  name: "embedding forward and backward over a table split by rows (ids in every part, one part no id reaches)",
  ignore: noGpu,
  async fn() {
    const gpu = withTensorLimit(await testGpu(), 10 * 67 * 4);
    const V = 53, C = 67, T = 131;
    // No id in [20, 30): the third part gets no backward dispatch and keeps its values.
    const ids = Int32Array.from(intArray(5, T, V), (id) => (id >= 20 && id < 30 ? id + 10 : id));
    const table = uniformArray(6, V * C), dOut = uniformArray(7, T * C), prev = uniformArray(8, V * C);
    const tTable = storedFromHost(gpu, table, [V, C]);
    const dE = storedFromHost(gpu, prev, [V, C]);
    assert.deepEqual(rowParts(tTable).map((p) => p.rows), [10, 10, 10, 10, 10, 3]);
    const tIds = fromHost(gpu, ids, [T], "u32"), out = zeros(gpu, [T, C]), tdOut = fromHost(gpu, dOut, [T, C]);
    const batch = new Batch(gpu);
    embeddingForward(batch, tIds, tTable, out);
    embeddingBackward(batch, embeddingBuckets(ids), tdOut, dE);
    await batch.submit();
    const [got, dGot] = await readStored(gpu, [out, dE]);
    assertClose("forward", got, embeddingRef(ids, Float32Array.from(table), C), { atol: 0, rtol: 0 });
    assertClose("backward", dGot, embeddingBackwardRef(ids, dOut, prev, C), { atol: 1e-5, rtol: 1e-5 });
    for (const t of [tTable, dE, tIds, out, tdOut]) t.release();
  },
});
