import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { swigluBackward, swigluForward } from "../../src/ops/swiglu.ts";
import { assertClose } from "../reference/check.ts";
import { uniformArray } from "../reference/random.ts";
import { swigluBackwardRef, swigluRef } from "../reference/swiglu.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

// exp and a division per element: WGSL's exp is accurate to a few ulps on lavapipe and GPUs.
const TOL = { atol: 1e-6, rtol: 2e-5 };

Deno.test({
  name: "swiglu forward and backward against the f64 reference, including saturated gates",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const T = 7, I = 89;
    const gu = uniformArray(1, T * 2 * I, -6, 6);
    gu[0] = 100;
    gu[1] = -100;
    const dh = uniformArray(2, T * I);
    const tgu = fromHost(gpu, gu, [T, 2 * I]);
    const tdh = fromHost(gpu, dh, [T, I]);
    const h = zeros(gpu, [T, I]);
    const dgu = zeros(gpu, [T, 2 * I]);
    const batch = new Batch(gpu);
    swigluForward(batch, tgu, h);
    swigluBackward(batch, tgu, tdh, dgu);
    const [gh, gd] = await batch.read([h, dgu]);
    const g32 = Float64Array.from(Float32Array.from(gu));
    assertClose("h", gh, swigluRef(g32, I), TOL);
    assertClose("dgu", gd, swigluBackwardRef(g32, Float64Array.from(Float32Array.from(dh)), I), TOL);
  },
});
