import { Batch } from "../../src/gpu/batch.ts";
import { fromHost } from "../../src/gpu/tensor.ts";
import { ropeBackward, ropeForward, ropeTable } from "../../src/ops/rope.ts";
import { assertClose } from "../reference/check.ts";
import { intArray, uniformArray } from "../reference/random.ts";
import { ropeRef } from "../reference/rope.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

// Two f32 products and a sum per element, tables rounded once from f64: a few ulps.
const TOL = { atol: 1e-6, rtol: 1e-5 };

Deno.test({
  name: "rope rotates the q and k heads of a fused QKV row in place, and back, against the f64 reference",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const T = 9, H = 3, KV = 1, D = 10, theta = 1e6, P = 4000;
    const stride = H + 2 * KV;
    const pos = intArray(1, T, P);
    const x = uniformArray(2, T * stride * D);
    const table = ropeTable(gpu, theta, D, P);
    const tpos = fromHost(gpu, pos, [T], "u32");
    const fwd = fromHost(gpu, x, [T, stride, D]);
    const bwd = fromHost(gpu, x, [T, stride, D]);
    const batch = new Batch(gpu);
    const args = { pos: tpos, table, heads: H + KV, stride };
    ropeForward(batch, { ...args, x: fwd });
    ropeBackward(batch, { ...args, x: bwd });
    const [gf, gb] = await batch.read([fwd, bwd]);
    const o = { heads: H + KV, stride, D, theta };
    assertClose("forward", gf, ropeRef(x, pos, o), TOL);
    assertClose("backward", gb, ropeRef(x, pos, { ...o, sign: -1 }), TOL);
  },
});
