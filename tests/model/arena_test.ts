// Parameter arenas: the layout (aligned, decayed tensors first, chunked under the tensor limit, none where a tensor
// alone passes it), sets as views that read back what was uploaded, and AdamW over whole chunks against AdamW
// tensor by tensor on the same data: bit for bit without clipping, within rounding with it (the gradient norm sums
// in another order), in a handful of dispatches instead of two per tensor.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { type Gpu, withTensorLimit } from "../../src/gpu/device.ts";
import { sizeOf, write } from "../../src/gpu/tensor.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { paramTable } from "../../src/model/params.ts";
import { type ArenaLayout, arenaLayout, TensorSet } from "../../src/model/weights.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { assertClose } from "../reference/check.ts";
import { Rng } from "../../src/util/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { ARCHS, BASE, randomParams, toF32 } from "./golden.ts";

const CONFIG = parseModelConfig({ ...BASE, ...ARCHS[0][1] });
const SPECS = paramTable(CONFIG);

/** Every tensor inside its chunk, aligned, apart from the others, and the decayed ones before decayEnd. */
function checkLayout(gpu: Gpu, layout: ArenaLayout): void {
  const align = gpu.limits.minStorageBufferOffsetAlignment / 4;
  const spans: [number, number, number][] = [];
  for (const s of SPECS) {
    const p = layout.place.get(s.name);
    assert.ok(p, `${s.name} is placed`);
    const end = p.offset + sizeOf(s.shape);
    assert.equal(p.offset % align, 0, `${s.name} at an aligned offset`);
    assert.ok(end <= layout.chunks[p.chunk], `${s.name} inside chunk ${p.chunk}`);
    assert.ok(s.decay ? end <= layout.decayEnd[p.chunk] : p.offset >= layout.decayEnd[p.chunk], `${s.name} decay`);
    spans.push([p.chunk, p.offset, end]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i][0] === spans[i - 1][0]) assert.ok(spans[i][1] >= spans[i - 1][2], "tensors do not overlap");
  }
  for (const n of layout.chunks) assert.ok(n * 4 <= gpu.tensorLimit, "chunks within the tensor limit");
}

Deno.test({
  name: "arena layout: aligned, decayed tensors first, chunked under the tensor limit, none past it",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const one = arenaLayout(gpu, SPECS)!;
    assert.equal(one.chunks.length, 1);
    checkLayout(gpu, one);
    assert.ok(SPECS.some((s) => !s.decay) && one.decayEnd[0] < one.chunks[0], "norms after the matrices");
    // The largest tensor padded to the alignment is the smallest limit that still gives an arena.
    const align = gpu.limits.minStorageBufferOffsetAlignment / 4;
    const largest = Math.max(...SPECS.map((s) => Math.ceil(sizeOf(s.shape) / align) * align));
    const small = withTensorLimit(gpu, largest * 4);
    const many = arenaLayout(small, SPECS)!;
    assert.ok(many.chunks.length > 2, `${many.chunks.length} chunks`);
    checkLayout(small, many);
    assert.equal(arenaLayout(withTensorLimit(gpu, largest * 4 - 4), SPECS), undefined);
    assert.equal(TensorSet.zeros(withTensorLimit(gpu, largest * 4 - 4), CONFIG).arena, undefined);
  },
});

Deno.test({
  name: "arena sets: views that read back what was uploaded; f16 sets stay per tensor",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const host = toF32(randomParams(CONFIG, 5));
    const set = TensorSet.fromHost(gpu, CONFIG, host);
    assert.ok(set.arena);
    assert.ok(SPECS.every((s) => set.get(s.name).buffer === set.arena!.chunks[0].buffer), "one buffer");
    assert.deepEqual(await set.toHost(), host);
    const half = TensorSet.fromHost(gpu, CONFIG, host, { dtype: () => "f16" });
    assert.equal(half.arena, undefined);
    set.release();
    half.release();
  },
});

/** Two learners on the same data, one stepping per chunk and one per tensor; returns both sets of parameters. */
async function stepBoth(gpu: Gpu, maxGradNorm: number, steps: number) {
  const host = toF32(randomParams(CONFIG, 9));
  const rng = new Rng(11);
  const grads = Array.from({ length: steps }, () => {
    return new Map(SPECS.map((s) => [s.name, Float32Array.from({ length: sizeOf(s.shape) }, () => rng.normal())]));
  });
  const settings = { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.1, maxGradNorm };
  const out = [];
  for (const perTensor of [false, true]) {
    const params = TensorSet.fromHost(gpu, CONFIG, host), g = TensorSet.zeros(gpu, CONFIG);
    // A selection (even of everything) takes the per-tensor path.
    const opt = new AdamW(gpu, params, g, settings, perTensor ? () => true : undefined);
    let dispatches = 0;
    for (const step of grads) {
      for (const s of SPECS) write(g.get(s.name), step.get(s.name)!);
      const batch = new Batch(gpu);
      opt.record(batch, 0.01);
      dispatches = batch.dispatches;
      const [stats] = await batch.read([opt.stats]);
      assert.ok(opt.commit(stats).applied);
    }
    out.push({ params: await params.toHost(), m: await opt.m.toHost(), dispatches });
    for (const x of [params, g, opt]) x.release();
  }
  return out;
}

Deno.test({
  name: "AdamW over arena chunks equals AdamW tensor by tensor, in a few dispatches",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const [chunked, single] = await stepBoth(gpu, 0, 3);
    assert.deepEqual(chunked.params, single.params, "no clipping: bit for bit");
    assert.deepEqual(chunked.m, single.m);
    assert.equal(chunked.dispatches, 3, "gradient norm (2) and one update");
    assert.ok(single.dispatches > 2 * SPECS.length, `${single.dispatches} dispatches per tensor`);
    // Clipping on (the norm of unit normals is far above 0.5): the scale differs only by the sum's rounding.
    const [a, b] = await stepBoth(gpu, 0.5, 3);
    for (const s of SPECS) {
      assertClose(s.name, a.params.get(s.name)!, b.params.get(s.name)!, { atol: 1e-6, rtol: 1e-5 });
    }
  },
});

Deno.test({
  name: "AdamW over arena chunks decays the matrices and only them (zero gradients: decay alone moves weights)",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const host = toF32(randomParams(CONFIG, 13));
    const params = TensorSet.fromHost(gpu, CONFIG, host), g = TensorSet.zeros(gpu, CONFIG);
    const opt = new AdamW(gpu, params, g, { beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.5, maxGradNorm: 1 });
    const batch = new Batch(gpu);
    opt.record(batch, 0.1);
    await batch.submit();
    const got = await params.toHost();
    for (const s of SPECS) {
      const w = host.get(s.name)!;
      const want = s.decay ? w.map((x) => Math.fround(x * Math.fround(1 - Math.fround(0.1 * 0.5)))) : w;
      assertClose(s.name, got.get(s.name)!, want, { atol: 0, rtol: 2e-7 });
    }
    for (const x of [params, g, opt]) x.release();
  },
});
