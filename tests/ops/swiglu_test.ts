import { zeros } from "../../src/gpu/tensor.ts";
import { swigluBackward, swigluForward } from "../../src/ops/swiglu.ts";
import { roundF32, uniformArray } from "../reference/random.ts";
import { swigluBackwardRef, swigluRef } from "../reference/swiglu.ts";
import { noGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

// exp and a division per element: WGSL's exp is accurate to a few ulps on lavapipe and GPUs.
const TOL = { atol: 1e-6, rtol: 2e-5 };

Deno.test({
  name: "swiglu forward and backward against the f64 reference, including saturated gates",
  ignore: noGpu,
  async fn() {
    const T = 7, I = 89;
    const g = roundF32(uniformArray(1, T * I, -6, 6));
    g[0] = 100;
    g[1] = -100;
    const u = roundF32(uniformArray(3, T * I, -2, 2));
    const dh = roundF32(uniformArray(2, T * I));
    await checkOp({
      name: "swiglu",
      inputs: { g: { data: g, shape: [T, I] }, u: { data: u, shape: [T, I] } },
      forward(batch, x) {
        const h = zeros(batch.gpu, [T, I]);
        swigluForward(batch, x.g, x.u, h);
        return { h };
      },
      reference: (x) => ({ h: swigluRef(x.g, x.u) }),
      backward: {
        upstream: { h: dh },
        gpu(batch, x, dy) {
          const [dg, du] = [zeros(batch.gpu, [T, I]), zeros(batch.gpu, [T, I])];
          swigluBackward(batch, x.g, x.u, dy.h, dg, du);
          return { g: dg, u: du };
        },
        reference(x, dy) {
          const r = swigluBackwardRef(x.g, x.u, dy.h);
          return { g: r.dg, u: r.du };
        },
      },
      tol: TOL,
    });
  },
});
