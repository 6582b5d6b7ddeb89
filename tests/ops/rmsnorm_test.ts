import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { rmsnormBackward, rmsnormForward } from "../../src/ops/rmsnorm.ts";
import { assertClose } from "../reference/check.ts";
import { rmsnormBackwardRef, rmsnormRef } from "../reference/rmsnorm.ts";
import { uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

// Row reductions over C of f32 values: relative error grows like C·ε; C = 197 gives about 2e-5 at worst.
const TOL = { atol: 2e-5, rtol: 2e-5 };
// dw sums T = 13 rows.
const TOL_DW = { atol: 1e-4, rtol: 2e-5 };
const W = uniformArray(3, 197, 0.5, 1.5);

Deno.test({
  name: "rmsnorm forward and backward against the f64 reference at every workgroup size",
  ignore: noGpu,
  async fn() {
    const T = 13, C = 197, eps = 1e-6;
    // Every row's reduction at a GPU's usual 64 and a CPU rasteriser's 8, and at sizes above and below C's split.
    for (const workgroup of [2, 8, 64, 256]) {
      await checkOp({
        name: `rmsnorm wg${workgroup}`,
        inputs: { x: { data: uniformArray(1, T * C, -2, 2), shape: [T, C] }, w: { data: W, shape: [C] } },
        forward(batch, x) {
          const y = zeros(batch.gpu, [T, C]), rstd = zeros(batch.gpu, [T]);
          rmsnormForward(batch, { x: x.x, w: x.w, y, rstd, eps, workgroup });
          return { y, rstd };
        },
        reference: (x) => rmsnormRef(x.x, x.w, eps),
        backward: {
          upstream: { y: uniformArray(4, T * C) },
          gpu(batch, x, dy, y) {
            const dr = zeros(batch.gpu, [T, C]), dw = zeros(batch.gpu, [C]);
            rmsnormBackward(batch, { dy: dy.y, r: x.x, w: x.w, rstd: y.rstd, dr, dw, workgroup });
            return { x: dr, w: dw };
          },
          reference(x, dy) {
            const r = rmsnormBackwardRef(x.x, x.w, dy.y, eps);
            return { x: r.dr, w: r.dw };
          },
        },
        tol: { y: TOL, rstd: TOL, dx: TOL, dw: TOL_DW },
      });
    }
  },
});

Deno.test({
  name: "rmsnorm fused with the residual add, and its backward accumulating (beta 1), against the f64 reference",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const T = 13, C = 197, eps = 1e-6;
    const x = uniformArray(1, T * C, -2, 2);
    const a = uniformArray(2, T * C);
    const dy = uniformArray(4, T * C);
    const prevDr = uniformArray(5, T * C);
    const prevDw = uniformArray(6, C);
    const tx = fromHost(gpu, x, [T, C]);
    const ta = fromHost(gpu, a, [T, C]);
    const tw = fromHost(gpu, W, [C]);
    const tdy = fromHost(gpu, dy, [T, C]);
    for (const workgroup of [2, 8, 64, 256]) {
      const y2 = zeros(gpu, [T, C]), sum = zeros(gpu, [T, C]), rstd2 = zeros(gpu, [T]);
      const dr2 = fromHost(gpu, prevDr, [T, C]), dw2 = fromHost(gpu, prevDw, [C]);
      const batch = new Batch(gpu);
      rmsnormForward(batch, { x: tx, w: tw, y: y2, rstd: rstd2, eps, add: ta, sum, workgroup });
      rmsnormBackward(batch, { dy: tdy, r: sum, w: tw, rstd: rstd2, dr: dr2, dw: dw2, beta: 1, betaW: 1, workgroup });
      const [gy2, gsum, gr2, gdr2, gdw2] = await batch.read([y2, sum, rstd2, dr2, dw2]);
      const xa = x.map((v, i) => v + a[i]);
      const fused = rmsnormRef(xa, W, eps);
      assertClose(`sum wg${workgroup}`, gsum, xa, { atol: 1e-6, rtol: 1e-6 });
      assertClose(`y fused wg${workgroup}`, gy2, fused.y, TOL);
      assertClose(`rstd fused wg${workgroup}`, gr2, fused.rstd, TOL);
      const back2 = rmsnormBackwardRef(xa, W, dy, eps);
      assertClose(`dr accumulated wg${workgroup}`, gdr2, back2.dr.map((v, i) => v + prevDr[i]), TOL);
      assertClose(`dw accumulated wg${workgroup}`, gdw2, back2.dw.map((v, i) => v + prevDw[i]), TOL_DW);
    }
    const bad = new Batch(gpu);
    assert.throws(
      () => rmsnormForward(bad, { x: tx, w: tw, y: ta, rstd: zeros(gpu, [T]), eps, workgroup: 12 }),
      /power of two/,
    );
  },
});
