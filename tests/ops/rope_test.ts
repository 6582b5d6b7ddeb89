import { ropeBackward, ropeForward, ropeTable } from "../../src/ops/rope.ts";
import { intArray, uniformArray } from "../reference/random.ts";
import { ropeRef } from "../reference/rope.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

// Two f32 products and a sum per element, tables rounded once from f64: a few ulps.
const TOL = { atol: 1e-6, rtol: 1e-5 };

Deno.test({
  name: "rope rotates the q and k heads of a fused QKV row in place, and back, against the f64 reference",
  ignore: noGpu,
  async fn() {
    const T = 9, H = 3, KV = 1, D = 10, theta = 1e6, P = 4000;
    const stride = H + 2 * KV;
    const table = ropeTable(await testGpu(), theta, D, P);
    const o = { heads: H + KV, stride, D, theta };
    // The backward of a rotation is the rotation by -angle: the gradient of x is dy rotated back.
    await checkOp({
      name: "rope",
      inputs: {
        x: { data: uniformArray(2, T * stride * D), shape: [T, stride, D] },
        pos: { data: intArray(1, T, P), shape: [T], dtype: "u32" },
      },
      forward(batch, x) {
        ropeForward(batch, { x: x.x, pos: x.pos, table, heads: H + KV, stride });
        return { x: x.x };
      },
      reference: (x) => ({ x: ropeRef(x.x, x.pos, o) }),
      backward: {
        upstream: { x: uniformArray(3, T * stride * D) },
        gpu(batch, x, dy) {
          ropeBackward(batch, { x: dy.x, pos: x.pos, table, heads: H + KV, stride });
          return { x: dy.x };
        },
        reference: (x, dy) => ({ x: ropeRef(dy.x, x.pos, { ...o, sign: -1 }) }),
      },
      tol: TOL,
    });
  },
});
