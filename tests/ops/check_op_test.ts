/**
 * checkOp (tests/ops/check_op.ts) refuses what it must: a wrong forward, a wrong gradient, a wrong reference, a
 * backward that differs between two runs.
 */
import assert from "node:assert/strict";
import { zeros } from "../../src/gpu/tensor.ts";
import { swigluBackward, swigluForward } from "../../src/ops/swiglu.ts";
import { roundF32, uniformArray } from "../reference/random.ts";
import { swigluBackwardRef, swigluRef } from "../reference/swiglu.ts";
import { noGpu } from "../no_gpu.ts";
import { checkOp, type OpCheck } from "./check_op.ts";

const T = 3, I = 17;
const g = roundF32(uniformArray(11, T * I, -4, 4));
const u = roundF32(uniformArray(12, T * I));

/** A swiglu check whose backward reference swaps the two gradients when `swap` (and the GPU side with it). */
function swiglu(swap: boolean): OpCheck {
  return {
    name: "swiglu",
    inputs: { g: { data: g, shape: [T, I] }, u: { data: u, shape: [T, I] } },
    forward(batch, x) {
      const h = zeros(batch.gpu, [T, I]);
      swigluForward(batch, x.g, x.u, h);
      return { h };
    },
    reference: (x) => ({ h: swigluRef(x.g, x.u) }),
    backward: {
      upstream: { h: uniformArray(13, T * I) },
      gpu(batch, x, dy) {
        const [dg, du] = [zeros(batch.gpu, [T, I]), zeros(batch.gpu, [T, I])];
        swigluBackward(batch, x.g, x.u, dy.h, dg, du);
        return swap ? { g: du, u: dg } : { g: dg, u: du };
      },
      reference(x, dy) {
        const r = swigluBackwardRef(x.g, x.u, dy.h);
        return swap ? { g: r.du, u: r.dg } : { g: r.dg, u: r.du };
      },
    },
    tol: { atol: 1e-6, rtol: 2e-5 },
  };
}

Deno.test({
  name: "checkOp passes a right op and names the output of a wrong forward, gradient or backward reference",
  ignore: noGpu,
  async fn() {
    await checkOp(swiglu(false));
    const scaled = swiglu(false);
    scaled.reference = (x) => ({ h: swigluRef(x.g, x.u).map((v) => v * 1.001) });
    await assert.rejects(checkOp(scaled), /swiglu: h: \d+ of 51 elements outside/);
    const gpuWrong = swiglu(false);
    gpuWrong.backward = { ...gpuWrong.backward!, reference: swiglu(true).backward!.reference };
    await assert.rejects(checkOp(gpuWrong), /swiglu: dg: /);
    // GPU and reference agree with each other but not with the forward: finite differences catch it.
    await assert.rejects(checkOp(swiglu(true)), /swiglu: reference dg vs finite differences/);
  },
});

Deno.test({
  name: "checkOp's deterministic backward passes a repeatable kernel and names a gradient that changes between runs",
  ignore: noGpu,
  async fn() {
    const twice = swiglu(false);
    twice.backward = { ...twice.backward!, deterministic: true };
    await checkOp(twice);
    // The second run returns its gradients swapped: the first is right, so only the determinism check can fail.
    let runs = 0;
    const flaky = swiglu(false);
    const gpu = flaky.backward!.gpu;
    flaky.backward = {
      ...flaky.backward!,
      deterministic: true,
      gpu(batch, x, dy, y) {
        const r = gpu(batch, x, dy, y);
        return runs++ === 0 ? r : { g: r.u, u: r.g };
      },
    };
    await assert.rejects(checkOp(flaky), /swiglu: dg differs between two backward runs at \[0\]/);
  },
});
