// The matmul op's use of the autotuner: seeds, the tuned choice taking over, the pending path through a sync
// point, and one real timing on this adapter (no assertion on speed).
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { withTensorLimit } from "../../src/gpu/device.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import { configureTuner } from "../../src/gpu/tuner.ts";
import { matmul, matmulSplit, pickMatmulVariant, tuneMatmul } from "../../src/ops/matmul.ts";
import {
  MATMUL_SEEDS,
  matmulCandidates,
  matmulKey,
  matmulVariant,
  seededMatmulVariant,
} from "../../src/ops/matmul_variants.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

Deno.test("the seeds are lavapipe's measured table (the tallest register block the rows fill) and a hardware guess", () => {
  const software = { software: true }, hardware = { software: false };
  const pick = (g: { software: boolean }, M: number, N = 896) => seededMatmulVariant(g, { M, N, K: 896 }).name;
  assert.deepEqual([1, 8, 9, 16, 17, 32, 33, 4096].map((m) => pick(software, m)), [
    "reg8x8",
    "reg8x8",
    "reg16x8",
    "reg16x8",
    "reg32x8",
    "reg32x8",
    "reg64x8",
    "reg64x8",
  ]);
  assert.deepEqual([8, 200, 4096].map((m) => pick(hardware, m)), [
    "gemv8_w64x4",
    "tile64x64_t8x8_k16",
    "tile128x64_t8x8_k16",
  ]);
  assert.equal(pick(hardware, 4096, 100), "tile64x64_t4x4_k16");
  for (const rules of Object.values(MATMUL_SEEDS)) rules.forEach((r) => matmulVariant(r.variant));
  // A CPU rasteriser times register blocks only (the same bits whichever wins); a GPU never the large ones.
  assert.ok(matmulCandidates(software, { M: 512, N: 896, K: 896 }).every((v) => v.kind === "reg"));
  const gpu = matmulCandidates(hardware, { M: 512, N: 896, K: 896 }).map((v) => v.kind);
  assert.ok(gpu.includes("wg") && gpu.includes("tile") && !gpu.includes("reg") && !gpu.includes("gemv"));
  assert.ok(matmulCandidates(hardware, { M: 4, N: 896, K: 896 }).some((v) => v.kind === "gemv"));
});

Deno.test("tuner keys bucket the varying dimensions (M and K) to powers of two and keep N", () => {
  assert.equal(matmulKey("p", { M: 300, N: 896, K: 4864, transB: true }), "p NT f32xf32 M512 N896 K8192");
  assert.equal(matmulKey("p", { M: 1, N: 7, K: 3, transA: true, bt: "f16" }), "p TN f32xf16 M1 N7 K4");
  assert.equal(matmulKey("p", { M: 257, N: 7, K: 3 }), matmulKey("p", { M: 512, N: 7, K: 3 }));
});

Deno.test({
  name: "a tuned choice replaces the seed for its shape; a miss is timed at the next readback (speeds told)",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const shape = { M: 24, N: 40, K: 16, transB: true };
    try {
      // reg16x8 is told faster than reg32x8 (the seed for 24 rows) and the other register blocks.
      const timer = (c: string) => Promise.resolve(c === "reg16x8" ? 1 : 2);
      configureTuner(gpu, { mode: "on", cachePath: null, timer, log: null });
      assert.equal(pickMatmulVariant(gpu, shape).name, "reg32x8", "the seed until the readback");
      const a = zeros(gpu, [24, 16]), b = zeros(gpu, [40, 16]), c = zeros(gpu, [24, 40]);
      const batch = new Batch(gpu);
      matmul(batch, { a, b, out: c, transB: true });
      await batch.read([c]);
      assert.equal(pickMatmulVariant(gpu, shape).name, "reg16x8");
      assert.equal(pickMatmulVariant(gpu, { ...shape, M: 30 }).name, "reg16x8", "the same bucket");
      assert.equal(pickMatmulVariant(gpu, { ...shape, transB: false }).name, "reg32x8", "another layout: seeded");
      // Explicit tuning of another shape, told the other way round.
      configureTuner(gpu, { mode: "on", cachePath: null, timer: (v) => Promise.resolve(v === "reg8x8" ? 1 : 3) });
      assert.equal((await tuneMatmul(gpu, { M: 100, N: 40, K: 16 })).variant, "reg8x8");
      assert.equal(pickMatmulVariant(gpu, { M: 100, N: 40, K: 16 }).name, "reg8x8");
      for (const t of [a, b, c]) t.release();
    } finally {
      configureTuner(gpu, { mode: "off" });
    }
  },
});

Deno.test({
  name: "tuning a matmul shape on this adapter times every candidate and keeps one of them",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    try {
      configureTuner(gpu, { mode: "on", cachePath: null, log: null });
      const shape = { M: 20, N: 24, K: 12, transA: true };
      const choice = await tuneMatmul(gpu, shape);
      const names = matmulCandidates(gpu, shape).map((v) => v.name);
      assert.deepEqual(Object.keys(choice.ms), names);
      assert.ok(Object.values(choice.ms).every((ms) => ms > 0 && Number.isFinite(ms)), JSON.stringify(choice.ms));
      assert.ok(names.includes(choice.variant));
      assert.equal(choice.seed, seededMatmulVariant(gpu, shape).name);
    } finally {
      configureTuner(gpu, { mode: "off" });
    }
  },
});

Deno.test({
  name: "a split over K has no empty chunk, and fewer chunks where K is short or the partial sums pass the limit",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const s16 = matmulVariant("wg64x64_t4x4_k16_s16");
    assert.deepEqual(matmulSplit(gpu, s16, { M: 64, N: 64, K: 4096, count: 1 }), { splits: 16, kChunk: 256 });
    assert.deepEqual(matmulSplit(gpu, s16, { M: 64, N: 64, K: 200, count: 1 }), { splits: 13, kChunk: 16 });
    assert.deepEqual(matmulSplit(gpu, s16, { M: 64, N: 64, K: 40, count: 1 }), { splits: 3, kChunk: 16 });
    assert.deepEqual(matmulSplit(gpu, s16, { M: 64, N: 64, K: 0, count: 1 }), { splits: 1, kChunk: 1 });
    // 64 x 64 partial sums are 16 KiB a chunk: a 40 KiB limit leaves room for 2.
    const small = withTensorLimit(gpu, 40 * 1024);
    assert.deepEqual(matmulSplit(small, s16, { M: 64, N: 64, K: 4096, count: 1 }), { splits: 2, kChunk: 2048 });
    assert.deepEqual(matmulSplit(gpu, matmulVariant("reg64x8"), { M: 64, N: 64, K: 4096, count: 1 }), {
      splits: 1,
      kChunk: 4096,
    });
  },
});
