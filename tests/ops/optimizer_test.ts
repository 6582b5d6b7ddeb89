import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { adamw } from "../../src/ops/adamw.ts";
import { gradNorm } from "../../src/ops/gradnorm.ts";
import { assertClose } from "../reference/check.ts";
import { adamwRef, gradNormRef } from "../reference/optimizer.ts";
import { uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

Deno.test({
  name: "gradient norm over tensors of awkward sizes, clip scale, then AdamW against the f64 reference",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const sizes = [1, 4095, 4097, 10001];
    const grads = sizes.map((n, i) => uniformArray(10 + i, n));
    const tg = grads.map((g) => fromHost(gpu, g, [g.length]));
    const stats = zeros(gpu, [4]);
    const n = sizes[3];
    const w = uniformArray(1, n), m = uniformArray(2, n, 0, 0.1), v = uniformArray(3, n, 0, 0.01);
    const tw = fromHost(gpu, w, [n]), tm = fromHost(gpu, m, [n]), tv = fromHost(gpu, v, [n]);
    const settings = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, step: 3 };
    const maxNorm = 1;
    const batch = new Batch(gpu);
    gradNorm(batch, tg, stats, maxNorm);
    adamw(batch, { w: tw, g: tg[3], m: tm, v: tv }, stats, settings);
    const [s, gw, gm, gv] = await batch.read([stats, tw, tm, tv]);
    const ref = gradNormRef(grads, maxNorm);
    // A sum of 18k squares in f32, reduced in a tree: relative error far below 1e-5.
    assertClose("norm", [s[0]], [ref.norm], { atol: 0, rtol: 1e-5 });
    assertClose("scale", [s[1]], [ref.scale], { atol: 0, rtol: 1e-5 });
    assert.equal(s[2], 1);
    assert.ok(ref.scale < 1, "the test must exercise clipping");
    const upd = adamwRef(w, grads[3], m, v, { ...settings, scale: ref.scale });
    // Elementwise, with a sqrt and a division: a few ulps; w moves by about lr, so atol 1e-6 is tight.
    assertClose("w", gw, upd.w, { atol: 1e-6, rtol: 1e-5 });
    assertClose("m", gm, upd.m, { atol: 1e-7, rtol: 1e-5 });
    assertClose("v", gv, upd.v, { atol: 1e-8, rtol: 1e-5 });
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
