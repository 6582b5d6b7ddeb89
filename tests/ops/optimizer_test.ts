import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { adamw } from "../../src/ops/adamw.ts";
import { gradNorm } from "../../src/ops/gradnorm.ts";
import { adamwRef, gradNormRef } from "../reference/optimizer.ts";
import { roundF32, uniformArray } from "../reference/random.ts";
import { checkOp } from "./check_op.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

Deno.test({
  name: "gradient norm over tensors of awkward sizes, clip scale, then AdamW against the f64 reference",
  ignore: noGpu,
  async fn() {
    const sizes = [1, 4095, 4097, 10001];
    const grads = sizes.map((n, i) => roundF32(uniformArray(10 + i, n)));
    const n = sizes[3];
    const settings = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step: 3 };
    const maxNorm = 1;
    const ref = gradNormRef(grads, maxNorm);
    assert.ok(ref.scale < 1, "the test must exercise clipping");
    const vector = (data: Float64Array) => ({ data, shape: [data.length] });
    await checkOp({
      name: "gradient norm and AdamW",
      inputs: {
        ...Object.fromEntries(grads.map((g, i) => [`g${i}`, vector(g)])),
        w: vector(roundF32(uniformArray(1, n))),
        m: vector(roundF32(uniformArray(2, n, 0, 0.1))),
        v: vector(roundF32(uniformArray(3, n, 0, 0.01))),
      },
      forward(batch, x) {
        const stats = zeros(batch.gpu, [4]);
        const tg = grads.map((_, i) => x[`g${i}`]);
        gradNorm(batch, tg, stats, maxNorm);
        adamw(batch, { w: x.w, g: tg[3], m: x.m, v: x.v }, stats, settings);
        return { stats, w: x.w, m: x.m, v: x.v };
      },
      reference(x) {
        const r = gradNormRef(grads.map((_, i) => x[`g${i}`]), maxNorm);
        const upd = adamwRef(x.w, x.g3, x.m, x.v, { ...settings, scale: r.scale });
        return { stats: [r.norm, r.scale, 1, 0], w: upd.w, m: upd.m, v: upd.v };
      },
      tol: {
        // A sum of 18k squares in f32, reduced in a tree: relative error far below 1e-5.
        stats: { atol: 0, rtol: 1e-5 },
        // Elementwise, with a sqrt and a division: a few ulps; w moves by about lr, so atol 1e-6 is tight.
        w: { atol: 1e-6, rtol: 1e-5 },
        m: { atol: 1e-7, rtol: 1e-5 },
        v: { atol: 1e-8, rtol: 1e-5 },
      },
    });
  },
});

Deno.test({
  name: "a non-finite gradient norm flags the step and AdamW leaves parameters and moments untouched",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const g = Float32Array.from([1, Infinity, 2]);
    const tg = fromHost(gpu, g, [3]);
    const stats = zeros(gpu, [4]);
    const w = [0.5, -0.25, 2], m = [0.1, 0.2, 0.3], v = [0.01, 0.02, 0.03];
    const tw = fromHost(gpu, w, [3]), tm = fromHost(gpu, m, [3]), tv = fromHost(gpu, v, [3]);
    const batch = new Batch(gpu);
    gradNorm(batch, [tg], stats, 1);
    adamw(batch, { w: tw, g: tg, m: tm, v: tv }, stats, { lr: 0.1, step: 1 });
    const [s, gw, gm, gv] = await batch.read([stats, tw, tm, tv]);
    assert.equal(s[2], 0);
    assert.deepEqual([...gw], Array.from(Float32Array.from(w)));
    assert.deepEqual([...gm], Array.from(Float32Array.from(m)));
    assert.deepEqual([...gv], Array.from(Float32Array.from(v)));
  },
});
