// The fused gate/up/SwiGLU projection against the f64 reference on shapes that cut every edge of its blocks (rows
// 1, 3, 64, 65 and one past each row block; odd K and N, columns past one workgroup), with f32 and f16 weights; its
// bits against the unfused path's where the matmuls run the same register blocks; and when a call fuses.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { type DType, fromHost, zeros } from "../../src/gpu/tensor.ts";
import { configureTuner, runPendingTuning } from "../../src/gpu/tuner.ts";
import {
  FUSE_ENV,
  FUSE_MAX_ROWS,
  fuseGateUp,
  GATE_UP_ROWS,
  GATE_UP_SEEDS,
  gateUpSwiglu,
  gateUpSwigluUnfused,
} from "../../src/ops/gate_up_swiglu.ts";
import { seededMatmulVariant } from "../../src/ops/matmul_variants.ts";
import { maxAbs } from "../reference/check.ts";
import { gateUpSwigluRef } from "../reference/gate_up_swiglu.ts";
import { roundF16, roundF32, uniformArray } from "../reference/random.ts";
import { noF16, noGpu, testGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

// Odd inner and output sizes: N spans two workgroups of lanes x 4 columns with a partial last one.
const N = 45, K = 29;

/** One call through checkOp: M rows, `rows` per block (default the op's pick), weights stored as `wt`. */
async function check(M: number, opts: { rows?: number; wt?: DType; seed: number }) {
  const wt = opts.wt ?? "f32", seed = opts.seed;
  const weights = (s: number) => (wt === "f16" ? roundF16 : roundF32)(uniformArray(s, N * K));
  const x = roundF32(uniformArray(seed, M * K)), gate = weights(seed + 1), up = weights(seed + 2);
  // Each product sums K terms below max|x| · max|w|, rounded once each; SwiGLU scales an error by at most
  // 1.1 · |u| + |silu(g)|, both below the product's bound.
  const bound = K * maxAbs(x) * Math.max(maxAbs(gate), maxAbs(up));
  const e = 4 * Math.sqrt(K) * 1.2e-7 * maxAbs(x) * Math.max(maxAbs(gate), maxAbs(up));
  await checkOp({
    name: `gate_up_swiglu M=${M} rows=${opts.rows ?? "auto"} ${wt}`,
    inputs: {
      x: { data: x, shape: [M, K] },
      gate: { data: gate, shape: [N, K], dtype: wt },
      up: { data: up, shape: [N, K], dtype: wt },
    },
    forward(batch, t) {
      const h = zeros(batch.gpu, [M, N]);
      gateUpSwiglu(batch, { x: t.x, gate: t.gate, up: t.up, h, rows: opts.rows });
      return { h };
    },
    reference: (t) => ({ h: gateUpSwigluRef(t.x, t.gate, t.up, { M, N, K }) }),
    tol: { atol: e * 2.1 * bound + 1e-6, rtol: 2e-5 },
  });
}

Deno.test({
  name: "gate_up_swiglu against the f64 reference: rows 1, 3, 64, 65 and across every row block's edge",
  ignore: noGpu,
  async fn() {
    let seed = 10;
    for (const M of [1, 3, 64, 65]) await check(M, { seed: seed += 10 });
    for (const rows of GATE_UP_ROWS) await check(rows + 3, { rows, seed: seed += 10 });
    await check(0, { seed: seed += 10 });
  },
});

Deno.test({
  name: "gate_up_swiglu with f16 weights and f32 accumulation against the f64 reference of the rounded weights",
  ignore: noGpu || noF16,
  async fn() {
    let seed = 500;
    for (const M of [1, 3, 64, 65]) await check(M, { wt: "f16", seed: seed += 10 });
  },
});

Deno.test({
  name: "gate_up_swiglu gives the unfused path's bits where the matmuls run register blocks (one fma per k, in order)",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    if (seededMatmulVariant(gpu, { M: 1, N, K }).kind !== "reg") return; // other kernels sum in other orders
    for (const M of [1, 3, 17, 64]) {
      const x = fromHost(gpu, Float32Array.from(uniformArray(M, M * K)), [M, K]);
      const gate = fromHost(gpu, Float32Array.from(uniformArray(M + 1, N * K)), [N, K]);
      const up = fromHost(gpu, Float32Array.from(uniformArray(M + 2, N * K)), [N, K]);
      const fused = zeros(gpu, [M, N]), unfused = zeros(gpu, [M, N]);
      const batch = new Batch(gpu);
      gateUpSwiglu(batch, { x, gate, up, h: fused });
      gateUpSwigluUnfused(batch, { x, gate, up, h: unfused });
      const [a, b] = await batch.read([fused, unfused]);
      assert.deepEqual(a, b, `M=${M}`);
      for (const t of [x, gate, up, fused, unfused]) t.release();
    }
  },
});

Deno.test({
  name: "a gate/up call fuses by the seed, the tuner's measured choice, never past 64 rows or with CRUCIBLE_FUSE=0",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const seed = GATE_UP_SEEDS[gpu.software ? "software" : "hardware"] === "fused";
    const shape = { M: 4, N: 24, K: 16, wt: "f32" as const };
    assert.equal(fuseGateUp(gpu, shape), seed);
    assert.equal(fuseGateUp(gpu, { ...shape, M: FUSE_MAX_ROWS + 1 }), false);
    Deno.env.set(FUSE_ENV, "0");
    try {
      assert.equal(fuseGateUp(gpu, shape), false);
    } finally {
      Deno.env.delete(FUSE_ENV);
    }
    try {
      // The path the seed does not take is told faster: the seed runs until the next sync point, then the timing.
      const timer = (c: string) => Promise.resolve(c === (seed ? "unfused" : "fused") ? 1 : 2);
      configureTuner(gpu, { mode: "on", cachePath: null, timer, log: null });
      assert.equal(fuseGateUp(gpu, shape), seed);
      await runPendingTuning(gpu);
      assert.equal(fuseGateUp(gpu, shape), !seed);
      assert.equal(fuseGateUp(gpu, { ...shape, M: 3 }), !seed, "rows share a power-of-two bucket");
    } finally {
      configureTuner(gpu, { mode: "off", cachePath: null });
    }
  },
});
