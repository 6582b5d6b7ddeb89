import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { type Gpu, requestGpu } from "../../src/gpu/device.ts";
import { type DType, fromHost, type Tensor, zeros } from "../../src/gpu/tensor.ts";
import { biasGrad, matmul, matmulRegLanes, pickMatmulVariant } from "../../src/ops/matmul.ts";
import { MATMUL_VARIANTS, type MatmulVariant, matmulVariant } from "../../src/ops/matmul_variants.ts";
import { assertClose, maxAbs } from "../reference/check.ts";
import { biasGradRef, matmulRef } from "../reference/matmul.ts";
import { roundF16, roundF32, uniformArray } from "../reference/random.ts";
import { checkOp, type OpInput } from "./check_op.ts";
import { benchCases } from "../../bench/cases.ts";
import { measureCase } from "../../bench/measure.ts";
import { noF16, noGpu, testGpu } from "../no_gpu.ts";

// Shapes that are multiples of no block size: partial blocks along every edge, and K below and above one tile.
const M = 37, N = 45, K = 29;

/** f32 matmul tolerance: K products of values below max|a|·max|b|, each rounded once. */
function tol(a: ArrayLike<number>, b: ArrayLike<number>, k = K) {
  return { atol: 4 * Math.sqrt(k) * 1.2e-7 * maxAbs(a) * maxAbs(b), rtol: 1e-5 };
}

interface Case {
  m: number;
  n: number;
  k: number;
  batch: number;
  transA: boolean;
  transB: boolean;
  /** A and B carry the batch dimension (else one matrix is broadcast). */
  batchedA: boolean;
  batchedB: boolean;
  at?: DType;
  bt?: DType;
  /** Adds bias, a residual, alpha 0.5 and beta 1 to a second product. */
  epilogue?: boolean;
}

/**
 * One product (and its epilogue twin: bias, a residual broadcast over the batch, alpha 0.5 and beta 1 over a
 * previous C) through checkOp against the f64 reference. A variant's cases are one call each.
 */
async function check(gpu: Gpu, v: MatmulVariant, c: Case, seed: number): Promise<void> {
  const { m, n, k, batch, transA, transB, batchedA, batchedB } = c;
  const at = c.at ?? "f32", bt = c.bt ?? "f32";
  const round = (t: DType, xs: Float64Array) => t === "f16" ? roundF16(xs) : xs;
  const a = round(at, uniformArray(seed, (batchedA ? batch : 1) * m * k));
  const b = round(bt, uniformArray(seed + 1, (batchedB ? batch : 1) * k * n));
  const lead = (batched: boolean) => batched ? [batch] : [];
  const inputs: Record<string, OpInput> = {
    a: { data: a, shape: [...lead(batchedA), ...(transA ? [k, m] : [m, k])], dtype: at },
    b: { data: b, shape: [...lead(batchedB), ...(transB ? [n, k] : [k, n])], dtype: bt },
  };
  if (c.epilogue) {
    inputs.bias = { data: roundF32(uniformArray(seed + 2, n)), shape: [n] };
    inputs.res = { data: roundF32(uniformArray(seed + 3, m * n)), shape: [m, n] };
    inputs.prev = { data: roundF32(uniformArray(seed + 4, batch * m * n)), shape: [batch, m, n] };
  }
  const common = { M: m, N: n, K: k, batch, transA, transB, batchedA, batchedB };
  await checkOp({
    name: `${v.name} ${m}x${n}x${k} transA=${transA} transB=${transB} ${at}x${bt}`,
    gpu,
    inputs,
    forward(step, x): Record<string, Tensor> {
      const plain = zeros(step.gpu, [batch, m, n]);
      matmul(step, { a: x.a, b: x.b, out: plain, transA, transB, variant: v });
      if (!c.epilogue) return { plain };
      const epilogue = { bias: x.bias, residual: x.res, alpha: 0.5, beta: 1 };
      matmul(step, { a: x.a, b: x.b, out: x.prev, transA, transB, variant: v, ...epilogue });
      return { plain, epilogue: x.prev };
    },
    reference(x): Record<string, ArrayLike<number>> {
      const plain = matmulRef({ ...common, a: x.a, b: x.b });
      if (!c.epilogue) return { plain };
      const full = { bias: x.bias, residual: x.res, alpha: 0.5, beta: 1, c: x.prev };
      return { plain, epilogue: matmulRef({ ...common, a: x.a, b: x.b, ...full }) };
    },
    tol: tol(a, b, k),
  });
}

for (const v of MATMUL_VARIANTS) {
  Deno.test({
    name: `matmul ${v.name}: every transposition, bias, residual, beta, batch and broadcast against the f64 reference`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      let seed = 1;
      for (const transA of [false, true]) {
        for (const transB of [false, true]) {
          // Alternate which operand is broadcast over the batch (stride 0).
          await check(gpu, v, {
            m: M,
            n: N,
            k: K,
            batch: 2,
            transA,
            transB,
            batchedA: transA || !transB,
            batchedB: !transA || transB,
            epilogue: true,
          }, seed += 10);
        }
      }
    },
  });
}

Deno.test({
  name: "matmul tile kinds across tile edges: more than one block along M and N, partial last blocks, K over " +
    "several steps and every chunk of a split, in the linear layer's three layouts",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    let seed = 700;
    for (const v of MATMUL_VARIANTS.filter((x) => x.kind === "tile" || x.kind === "wg")) {
      const m = v.wy * v.tm + 5, n = v.wx * v.tn + 3, k = 2 * v.bk * v.splits + 7;
      for (const [transA, transB] of [[false, true], [false, false], [true, false]]) {
        const c = { m, n, k, batch: 1, transA, transB, batchedA: true, batchedB: true, epilogue: transB };
        await check(gpu, v, c, seed += 10);
      }
    }
  },
});

Deno.test({
  name: "matmul with f16 inputs and f32 accumulation: forward x·Wᵀ with f16 weights, and both f16, every variant",
  ignore: noGpu || noF16,
  async fn() {
    const gpu = await testGpu();
    for (const v of MATMUL_VARIANTS) {
      const base = { m: M, n: N, k: K, batch: 3, batchedA: true, batchedB: false };
      await check(gpu, v, { ...base, transA: false, transB: true, at: "f32", bt: "f16" }, 100);
      await check(gpu, v, { ...base, transA: true, transB: false, at: "f16", bt: "f16" }, 200);
    }
  },
});

Deno.test({
  name: "f16 weights with f32 accumulation: the error against the f32 weights' exact product stays within f16's " +
    "rounding (2^-11 of Σ|a·b| per output) and is larger than f32's",
  ignore: noGpu || noF16,
  async fn() {
    const gpu = await testGpu();
    const m = 40, n = 70, k = 300;
    const x = roundF32(uniformArray(901, m * k)), w = roundF32(uniformArray(902, n * k));
    const exact = matmulRef({ a: x, b: w, M: m, N: n, K: k, transB: true });
    // Σ_k |x · w| per output: the f16 rounding of each weight moves its term by at most 2^-11 of it.
    const absSum = matmulRef({ a: x.map(Math.abs), b: w.map(Math.abs), M: m, N: n, K: k, transB: true });
    const f32 = tol(x, w, k);
    for (const v of [pickMatmulVariant(gpu, { M: m, N: n, K: k, transB: true }), matmulVariant("wg64x64_t4x4_k16")]) {
      const ta = fromHost(gpu, x, [m, k]), tb = fromHost(gpu, w, [n, k], "f16"), out = zeros(gpu, [m, n]);
      const step = new Batch(gpu);
      matmul(step, { a: ta, b: tb, out, transB: true, variant: v });
      const [got] = await step.read([out]);
      let worst = 0;
      got.forEach((g, i) => {
        const err = Math.abs(g - exact[i]);
        worst = Math.max(worst, err);
        assert.ok(err <= 2 ** -11 * absSum[i] + f32.atol, `${v.name} [${i}]: error ${err} past f16's bound`);
      });
      // f16 storage happened: its error is far above what f32 weights allow.
      assert.ok(worst > 10 * f32.atol, `${v.name}: worst error ${worst} is no larger than f32's ${f32.atol}`);
      for (const t of [ta, tb, out]) t.release();
    }
  },
});

Deno.test({
  name: "matmul decode shapes (M = 1 and 5 rows, K past one workgroup's split) for every variant",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    for (const v of MATMUL_VARIANTS) {
      for (const m of [1, 5]) {
        await check(
          gpu,
          v,
          { m, n: 70, k: 131, batch: 1, transA: false, transB: true, batchedA: true, batchedB: true },
          300 + m,
        );
      }
    }
  },
});

Deno.test({
  name: "matmul with K = 0 writes the epilogue alone, and the adapter's pick covers decode, medium and large shapes",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    for (const shape of [{ M: 1, N: 896, K: 896 }, { M: 40, N: 70, K: 30 }, { M: 512, N: 4864, K: 896 }]) {
      assert.ok(MATMUL_VARIANTS.includes(pickMatmulVariant(gpu, shape)));
    }
    const v = pickMatmulVariant(gpu, { M: 3, N: 5, K: 0 });
    await check(gpu, v, {
      m: 3,
      n: 5,
      k: 0,
      batch: 1,
      transA: false,
      transB: false,
      batchedA: true,
      batchedB: true,
      epilogue: true,
    }, 400);
  },
});

Deno.test({
  name: "matmul reg kernels without subgroups (every lane loads A itself) on a device created without them",
  ignore: noGpu,
  async fn() {
    const gpu = await requestGpu({ disable: ["subgroups"] });
    try {
      assert.equal(matmulRegLanes(gpu).share, false);
      const v = matmulVariant("reg16x8");
      for (const [transA, transB] of [[false, false], [true, true]]) {
        await check(gpu, v, {
          m: M,
          n: N,
          k: K,
          batch: 2,
          transA,
          transB,
          batchedA: true,
          batchedB: false,
          epilogue: true,
        }, 500);
      }
    } finally {
      gpu.device.destroy();
    }
  },
});

Deno.test({
  name: "the benchmark times every matmul variant on 1024^3 and marks one picked variant per shape",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const cases = benchCases(gpu).filter((c) => c.kernel === "matmul");
    const square = cases.filter((c) => c.shape === "1024x1024x1024 NN f32").map((c) => c.variant);
    assert.deepEqual(square, MATMUL_VARIANTS.filter((v) => v.kind !== "gemv").map((v) => v.name));
    for (const shape of new Set(cases.map((c) => c.shape))) {
      assert.equal(cases.filter((c) => c.shape === shape && c.picked).length, 1, shape);
    }
    const tiny = { ...cases[0], shape: "3x5x7", flops: 2 * 3 * 5 * 7, bytes: undefined };
    tiny.setup = (g) => {
      const [a, b, c] = [[3, 7], [7, 5], [3, 5]].map((s) => zeros(g, s));
      return {
        record: (batch) => matmul(batch, { a, b, out: c }),
        release: () => [a, b, c].forEach((t) => t.release()),
      };
    };
    const r = await measureCase(gpu, tiny, { budgetMs: 20 });
    assert.ok(r.ms > 0 && r.reps >= 2 && r.gflops! > 0 && r.compileMs >= 0, JSON.stringify(r));
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

/** Rows [start, start + rows) of a row-major [*, width] array. */
function rowsOf(xs: Float64Array, width: number, start: number, rows: number): Float64Array {
  return xs.slice(start * width, (start + rows) * width);
}

Deno.test({
  name: "matmul column blocks (a weight split by rows): each part writes its columns of y, and reads its columns " +
    "of dy for dx and for its rows of dW, every variant",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    // x [M, K] · W [N, K]ᵀ with W in three row parts; part 1 is left out of y at first to show it stays untouched.
    const blocks: [number, number][] = [[0, 16], [16, 20], [36, 9]];
    const x = uniformArray(601, M * K), w = uniformArray(602, N * K), bias = uniformArray(603, N);
    const res = uniformArray(604, M * N), dy = uniformArray(605, M * N), prev = uniformArray(606, M * N);
    const tx = fromHost(gpu, x, [M, K]), tdy = fromHost(gpu, dy, [M, N]);
    const tbias = fromHost(gpu, bias, [N]), tres = fromHost(gpu, res, [M, N]);
    const parts = blocks.map(([s, n]) => fromHost(gpu, rowsOf(w, K, s, n), [n, K]));
    const yRef = matmulRef({ a: x, b: w, M, N, K, transB: true, bias, residual: res });
    const dxRef = matmulRef({ a: dy, b: w, M, N: K, K: N });
    const dwRef = matmulRef({ a: dy, b: x, M: N, N: K, K: M, transA: true, c: w, beta: 1 });
    for (const v of MATMUL_VARIANTS) {
      const y = fromHost(gpu, prev, [M, N]), dx = zeros(gpu, [M, K]);
      const dws = blocks.map(([s, n]) => fromHost(gpu, rowsOf(w, K, s, n), [n, K]));
      let step = new Batch(gpu);
      for (const i of [0, 2]) {
        const outCols = blocks[i];
        matmul(step, { a: tx, b: parts[i], out: y, transB: true, bias: tbias, residual: tres, outCols, variant: v });
      }
      const [partial] = await step.read([y]);
      step = new Batch(gpu);
      matmul(step, {
        a: tx,
        b: parts[1],
        out: y,
        transB: true,
        bias: tbias,
        residual: tres,
        outCols: blocks[1],
        variant: v,
      });
      blocks.forEach((aCols, i) => {
        matmul(step, { a: tdy, b: parts[i], out: dx, beta: i > 0 ? 1 : 0, aCols, variant: v });
        matmul(step, { a: tdy, b: tx, out: dws[i], transA: true, beta: 1, aCols, variant: v });
      });
      const [gy, gdx, ...gdw] = await step.read([y, dx, ...dws]);
      for (let m = 0; m < M; m++) {
        for (let n = 16; n < 36; n++) {
          assert.equal(partial[m * N + n], Math.fround(prev[m * N + n]), "part 1 untouched");
        }
      }
      assertClose(`${v.name} y by column blocks`, gy, yRef, tol(x, w));
      assertClose(`${v.name} dx summed over blocks`, gdx, dxRef, tol(dy, w, N));
      blocks.forEach(([s, n], i) => {
        assertClose(`${v.name} dW rows ${s}..${s + n}`, gdw[i], rowsOf(dwRef, K, s, n), tol(dy, x, M));
      });
      for (const t of [y, dx, ...dws]) t.release();
    }
    const refused = new Batch(gpu), out = zeros(gpu, [M, N]);
    assert.throws(
      () => matmul(refused, { a: tx, b: parts[0], out, transB: true, outCols: [40, 16] }),
      /Matmul C columns \[40, \+16\) are outside its rows of 45/,
    );
    await refused.submit();
    out.release();
    for (const t of [tx, tdy, tbias, tres, ...parts]) t.release();
  },
});
