import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { biasGrad, matmul } from "../../src/ops/matmul.ts";
import { MATMUL_VARIANTS } from "../../src/ops/matmul_variants.ts";
import { assertClose, maxAbs } from "../reference/check.ts";
import { biasGradRef, matmulRef } from "../reference/matmul.ts";
import { roundF16, uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

// Shapes that are multiples of no tile size.
const M = 37, N = 45, K = 29;

/** f32 matmul tolerance: K products of values below max|a|·max|b|, each rounded once. */
function tol(a: ArrayLike<number>, b: ArrayLike<number>) {
  return { atol: 4 * Math.sqrt(K) * 1.2e-7 * maxAbs(a) * maxAbs(b), rtol: 1e-5 };
}

for (const v of MATMUL_VARIANTS) {
  Deno.test({
    name: `matmul ${v.name}: every transposition, bias, residual, beta, batch against the f64 reference`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      const batch = 2;
      const a = uniformArray(1, batch * M * K);
      const b = uniformArray(2, batch * K * N);
      const bias = uniformArray(3, N);
      const res = uniformArray(4, batch * M * N);
      const prev = uniformArray(5, batch * M * N);
      for (const transA of [false, true]) {
        for (const transB of [false, true]) {
          const ta = fromHost(gpu, Float32Array.from(a), transA ? [batch, K, M] : [batch, M, K]);
          const tb = fromHost(gpu, Float32Array.from(b), transB ? [batch, N, K] : [batch, K, N]);
          const plain = zeros(gpu, [batch, M, N]);
          const full = fromHost(gpu, Float32Array.from(prev), [batch, M, N]);
          const tbias = fromHost(gpu, Float32Array.from(bias), [N]);
          const tres = fromHost(gpu, Float32Array.from(res), [batch, M, N]);
          const step = new Batch(gpu);
          matmul(step, { a: ta, b: tb, out: plain, transA, transB, variant: v });
          matmul(step, {
            a: ta,
            b: tb,
            out: full,
            transA,
            transB,
            variant: v,
            bias: tbias,
            residual: tres,
            alpha: 0.5,
            beta: 1,
          });
          const [gotPlain, gotFull] = await step.read([plain, full]);
          const common = { a, b, M, N, K, batch, transA, transB, batchedA: true, batchedB: true };
          const what = `${v.name} transA=${transA} transB=${transB}`;
          assertClose(`${what} plain`, gotPlain, matmulRef(common), tol(a, b));
          const ref = matmulRef({ ...common, bias, residual: res, alpha: 0.5, beta: 1, c: prev });
          assertClose(`${what} epilogue`, gotFull, ref, tol(a, b));
          for (const t of [ta, tb, plain, full, tbias, tres]) t.release();
        }
      }
    },
  });
}

Deno.test({
  name: "matmul with f16 inputs and f32 accumulation, B broadcast over the batch",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    if (!gpu.features.f16) return;
    const batch = 3;
    const a = roundF16(uniformArray(6, batch * M * K));
    const b = roundF16(uniformArray(7, N * K));
    for (const v of MATMUL_VARIANTS) {
      const ta = fromHost(gpu, a, [batch, M, K], "f16");
      const tb = fromHost(gpu, b, [N, K], "f16");
      const out = zeros(gpu, [batch, M, N]);
      const step = new Batch(gpu);
      matmul(step, { a: ta, b: tb, out, transB: true, variant: v });
      const [got] = await step.read([out]);
      const ref = matmulRef({ a, b, M, N, K, batch, transB: true, batchedA: true, batchedB: false });
      assertClose(`f16 ${v.name}`, got, ref, tol(a, b));
    }
  },
});

Deno.test({
  name: "bias gradient sums rows, and accumulates with beta = 1",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const rows = 133, cols = 70;
    const dy = uniformArray(8, rows * cols);
    const prev = uniformArray(9, cols);
    const tdy = fromHost(gpu, dy, [rows, cols]);
    const db = fromHost(gpu, prev, [cols]);
    const step = new Batch(gpu);
    biasGrad(step, tdy, db, 1);
    const [got] = await step.read([db]);
    const ref = biasGradRef(dy, rows, cols).map((x, i) => x + prev[i]);
    assertClose("bias grad", got, ref, { atol: 1e-5, rtol: 1e-5 });
  },
});
