import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { swigluBackward, swigluForward } from "../../src/ops/swiglu.ts";
import { assertClose } from "../reference/check.ts";
import { roundF32, uniformArray } from "../reference/random.ts";
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
    const g = roundF32(uniformArray(1, T * I, -6, 6));
    g[0] = 100;
    g[1] = -100;
    const u = roundF32(uniformArray(3, T * I, -2, 2));
    const dh = roundF32(uniformArray(2, T * I));
    const [tg, tu, tdh] = [g, u, dh].map((x) => fromHost(gpu, x, [T, I]));
    const [h, dg, du] = [0, 1, 2].map(() => zeros(gpu, [T, I]));
    const batch = new Batch(gpu);
    swigluForward(batch, tg, tu, h);
    swigluBackward(batch, tg, tu, tdh, dg, du);
    const [gh, gdg, gdu] = await batch.read([h, dg, du]);
    const ref = swigluBackwardRef(g, u, dh);
    assertClose("h", gh, swigluRef(g, u), TOL);
    assertClose("dg", gdg, ref.dg, TOL);
    assertClose("du", gdu, ref.du, TOL);
  },
});
