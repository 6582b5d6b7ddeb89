// The model with its matrices split by rows: the tiny golden models on a GPU handle whose tensor limit is 448 bytes,
// so the embedding, every projection and the LM head are held in 2 to 5 row parts (a part of one row among them).
// Logits, log-probs, entropy, loss and every gradient against the f64 reference; training steps, the optimizer's
// state through a save and restore, KV-cached generation and LoRA over an f16 base against the same model unsplit.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { type Gpu, withTensorLimit } from "../../src/gpu/device.ts";
import { rowParts, SplitTensor } from "../../src/gpu/split.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import { type ModelConfig, parseModelConfig } from "../../src/model/config.ts";
import { Generator } from "../../src/model/generate.ts";
import { loraScale, type LoraSettings, loraTable, resolveTargets } from "../../src/model/lora.ts";
import { loraTransformer } from "../../src/model/lora_model.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { paramTable } from "../../src/model/params.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { TensorSet } from "../../src/model/weights.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogprobRef, modelLossRef, type RefParams } from "../reference/model.ts";
import { noF16, noGpu, testGpu } from "../no_gpu.ts";
import { ARCHS, BASE, GRAD, LOGITS, randomParams, SEQS, sftGrad, toF32 } from "./golden.ts";

/** Bytes a tensor may take before it splits: 7 rows of the 16-wide f32 matrices, 4 of the 24-wide down_proj. */
const LIMIT = 448;

/** Asserts that every matrix of the set past the limit is split, and that some part is a single row. */
function assertSplit(set: TensorSet): void {
  let single = false;
  for (const spec of set.specs) {
    const t = set.stored(spec.name);
    if (t.bytes <= LIMIT && !(t instanceof SplitTensor)) continue;
    assert.ok(t instanceof SplitTensor, `${spec.name} [${spec.shape}] is split`);
    assert.ok(t.parts.every((p) => p.tensor.bytes <= LIMIT), `${spec.name}: parts within the limit`);
    single ||= t.parts.some((p) => p.rows === 1);
  }
  assert.ok(set.stored("model.embed_tokens.weight") instanceof SplitTensor, "the embedding is split");
  assert.ok(single, "some part holds one row");
}

/** Loss (mean NLL over the mask) of per-token log-probs. */
function lossOf(logp: ArrayLike<number>, mask: number[]): number {
  const count = mask.reduce((a, b) => a + b, 0);
  return -Array.from(logp).reduce((a, v, i) => a + v * mask[i], 0) / count;
}

for (const [name, overrides] of ARCHS) {
  Deno.test({
    name: `split model, ${name}: logits, log-probs, entropy, loss and every gradient match the f64 reference`,
    ignore: noGpu,
    async fn() {
      const gpu = withTensorLimit(await testGpu(), LIMIT);
      const config = parseModelConfig({ ...BASE, ...overrides });
      const ref = randomParams(config, 7);
      const weights = TensorSet.fromHost(gpu, config, toF32(ref));
      assertSplit(weights);
      const model = new Transformer(gpu, config, weights, { recompute: name.includes("tied") });
      const inputs = new PackedInputs(gpu, packSequences(SEQS.map((ids) => ({ ids }))));
      const expected = modelLogprobRef(config, ref, { seqs: SEQS });
      const logits = zeros(gpu, [inputs.tokens, config.vocabSize]);
      let batch = new Batch(gpu);
      const inf = model.forward(batch, inputs, { logits });
      const [gl, glp, gent] = await batch.read([logits, inf.logp, inf.entropy]);
      assertClose("logits", gl, expected.logits, LOGITS);
      const masked = (xs: ArrayLike<number>) => Array.from(xs, (v, i) => v * expected.mask[i]);
      assertClose("logp", masked(glp), masked(expected.logp), LOGITS);
      assertClose("entropy", gent, expected.entropy, LOGITS);

      const grads = TensorSet.zeros(gpu, config);
      assertSplit(grads);
      batch = new Batch(gpu);
      const tr = model.forward(batch, inputs, { grads, lossGrad: sftGrad(gpu, expected.mask) });
      const [tlp] = await batch.read([tr.logp]);
      const refLoss = modelLossRef(config, ref, { seqs: SEQS });
      assertClose("loss", [lossOf(tlp, expected.mask)], [refLoss], { atol: 1e-5, rtol: 1e-5 });
      const got = await grads.toHost();
      for (const spec of paramTable(config)) {
        const p = ref.get(spec.name)!;
        const fd = numericGrad((x) => modelLossRef(config, new Map(ref).set(spec.name, x), { seqs: SEQS }), p, 1e-5);
        assertClose(`d ${spec.name}`, got.get(spec.name)!, fd, GRAD);
      }
      for (const t of [inputs, weights, grads, logits]) t.release();
    },
  });
}

/** Three AdamW steps (clipping on) of a model; returns each step's loss, the first gradients and the optimizer. */
async function train(gpu: Gpu, config: ModelConfig, ref: RefParams, mask: number[]) {
  const weights = TensorSet.fromHost(gpu, config, toF32(ref));
  const model = new Transformer(gpu, config, weights);
  const grads = TensorSet.zeros(gpu, config);
  const opt = new AdamW(gpu, weights, grads, { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 });
  const inputs = new PackedInputs(gpu, packSequences(SEQS.map((ids) => ({ ids }))));
  const lossGrad = sftGrad(gpu, mask);
  const losses: number[] = [], norms: number[] = [];
  let first: Map<string, Float32Array> | undefined;
  for (let step = 0; step < 3; step++) {
    const batch = new Batch(gpu);
    grads.clear(batch);
    const out = model.forward(batch, inputs, { grads, lossGrad });
    opt.record(batch, 0.05);
    const [stats, logp] = await batch.read([opt.stats, out.logp]);
    assert.ok(opt.commit(stats).applied);
    losses.push(lossOf(logp, mask));
    norms.push(stats[0]);
    first ??= await grads.toHost();
  }
  inputs.release();
  return { weights, grads, opt, losses, norms, first: first! };
}

const CLOSE = { atol: 1e-5, rtol: 1e-4 };

Deno.test({
  name: "split model: three AdamW steps give the unsplit model's losses, gradients, norms, weights and moments; " +
    "the split optimizer state restores exactly",
  ignore: noGpu,
  async fn() {
    const whole = await testGpu(), gpu = withTensorLimit(whole, LIMIT);
    for (const [name, overrides] of ARCHS.slice(0, 2)) {
      const config = parseModelConfig({ ...BASE, ...overrides });
      const ref = randomParams(config, 9);
      const mask = modelLogprobRef(config, ref, { seqs: SEQS }).mask;
      const a = await train(whole, config, ref, mask);
      const b = await train(gpu, config, ref, mask);
      assertSplit(b.weights);
      assertSplit(b.opt.m);
      assertClose(`${name}: losses`, b.losses, a.losses, CLOSE);
      assertClose(`${name}: gradient norms`, b.norms, a.norms, CLOSE);
      const [wa, wb, ma, mb, va, vb] = await Promise.all(
        [a.weights, b.weights, a.opt.m, b.opt.m, a.opt.v, b.opt.v].map((s) => s.toHost()),
      );
      for (const spec of paramTable(config)) {
        const n = spec.name;
        assertClose(`${name}: first d ${n}`, b.first.get(n)!, a.first.get(n)!, CLOSE);
        // A key bias shifts every score of a query alike: its gradient is zero but for rounding, which AdamW's
        // normalised step turns into moves of any size. Its gradient above is checked; its steps are not.
        if (n.endsWith("k_proj.bias")) continue;
        assertClose(`${name}: ${n} after 3 steps`, wb.get(n)!, wa.get(n)!, CLOSE);
        assertClose(`${name}: m of ${n}`, mb.get(n)!, ma.get(n)!, CLOSE);
        // The unsplit sets are one arena, whose gradient norm sums in another order than the row parts': the clip
        // scale differs in its last bits, and three steps carry that into v at about 1e-5 of its size.
        assertClose(`${name}: v of ${n}`, vb.get(n)!, va.get(n)!, { atol: 1e-9, rtol: 1e-4 });
      }
      // A checkpoint's moments (read from split tensors) restored into a fresh split optimizer, read back alike.
      const restored = new AdamW(gpu, b.weights, b.grads);
      restored.restore(mb, vb, b.opt.step);
      const [rm, rv] = await Promise.all([restored.m.toHost(), restored.v.toHost()]);
      for (const spec of paramTable(config)) {
        assert.deepEqual(rm.get(spec.name), mb.get(spec.name));
        assert.deepEqual(rv.get(spec.name), vb.get(spec.name));
      }
      for (const s of [a, b]) {
        s.weights.release();
        s.grads.release();
        s.opt.release();
      }
      restored.release();
    }
  },
});

Deno.test({
  name: "split model: KV-cached greedy generation gives the unsplit model's exact ids, alone and batched",
  ignore: noGpu,
  async fn() {
    const whole = await testGpu(), gpu = withTensorLimit(whole, LIMIT);
    const config = parseModelConfig({ ...BASE, ...ARCHS[0][1], max_position_embeddings: 64 });
    const host = toF32(randomParams(config, 3));
    const prompts = [[1, 2, 3], [7], [28, 27, 26, 25, 24, 23, 22], [11, 5]];
    const run = async (g: Gpu) => {
      const model = Transformer.fromHost(g, config, host);
      const gen = new Generator(model, { slots: 4, maxLen: 40, blockSteps: 3 });
      const seqs = prompts.map((p, i) => gen.open(p, i));
      const limits = [12, 5, 9, 7].map((maxNewTokens) => ({ maxNewTokens, stopIds: [] }));
      const out = await gen.decode(seqs, limits, { temperature: 0 });
      gen.release();
      return { model, out };
    };
    const a = await run(whole), b = await run(gpu);
    assertSplit(b.model.weights);
    assert.ok(rowParts(b.model.weights.head).length > 1, "the untied LM head is split by vocabulary rows");
    b.out.forEach((o, i) => {
      assert.deepEqual(o.ids, a.out[i].ids, `prompt ${i}`);
      assertClose(`prompt ${i} log-probs`, o.logprobs, a.out[i].logprobs, { atol: 1e-5, rtol: 1e-5 });
    });
    a.model.weights.release();
    b.model.weights.release();
  },
});

Deno.test({
  name: "split model: LoRA over an f16 base split by rows matches the f64 reference, logits and every A and B gradient",
  ignore: noGpu || noF16,
  async fn() {
    const gpu = withTensorLimit(await testGpu(), LIMIT);
    const config = parseModelConfig({ ...BASE, model_type: "qwen2", tie_word_embeddings: false });
    const settings: LoraSettings = { rank: 3, alpha: 6, targets: resolveTargets(config, "all-linear") };
    const base = randomParams(config, 7);
    for (const s of paramTable(config)) {
      if (s.init === "normal") base.set(s.name, Float64Array.from(Float16Array.from(base.get(s.name)!)));
    }
    const adapter: RefParams = new Map();
    let k = 0;
    for (const s of loraTable(config, settings)) {
      const n = s.shape.reduce((x, y) => x * y, 1);
      adapter.set(s.name, Float64Array.from({ length: n }, () => Math.fround(0.5 * Math.sin(++k * 0.7))));
    }
    const model = loraTransformer(gpu, config, toF32(base), { settings, adapter: toF32(adapter), baseDtype: "f16" });
    const embed = model.weights.stored("model.embed_tokens.weight");
    assert.ok(embed instanceof SplitTensor && embed.dtype === "f16");
    assert.deepEqual(embed.parts.map((p) => p.rows), [14, 14, 1], "f16 rows are half as wide: 14 to a part");
    assert.ok(model.weights.stored("lm_head.weight") instanceof SplitTensor);
    const ref = new Map([...base, ...adapter]);
    const refBatch = { seqs: SEQS, lora: { scale: loraScale(settings) } };
    const expected = modelLogprobRef(config, ref, refBatch);
    const inputs = new PackedInputs(gpu, packSequences(SEQS.map((ids) => ({ ids }))));
    const logits = zeros(gpu, [inputs.tokens, config.vocabSize]);
    let batch = new Batch(gpu);
    model.forward(batch, inputs, { logits });
    const [gl] = await batch.read([logits]);
    assertClose("logits", gl, expected.logits, LOGITS);
    const grads = TensorSet.zeros(gpu, config, model.lora!.tensors.specs);
    batch = new Batch(gpu);
    const tr = model.forward(batch, inputs, { grads, lossGrad: sftGrad(gpu, expected.mask) });
    const [tlp] = await batch.read([tr.logp]);
    assertClose("loss", [lossOf(tlp, expected.mask)], [modelLossRef(config, ref, refBatch)], CLOSE);
    const got = await grads.toHost();
    for (const spec of loraTable(config, settings)) {
      const fd = numericGrad(
        (x) => modelLossRef(config, new Map(ref).set(spec.name, x), refBatch),
        ref.get(spec.name)!,
      );
      assertClose(`d ${spec.name}`, got.get(spec.name)!, fd, GRAD);
    }
    for (const t of [inputs, logits, grads, model.weights, model.lora!]) t.release();
  },
});

Deno.test({
  name: "a tensor that is never split, or a matrix row, past the limit is refused by name",
  ignore: noGpu,
  async fn() {
    const gpu = withTensorLimit(await testGpu(), 32);
    const config = parseModelConfig({ ...BASE, model_type: "qwen2" });
    const small = paramTable(config).filter((s) => s.init !== "normal");
    assert.throws(
      () => TensorSet.zeros(gpu, config, small),
      /Parameter model\.layers\.0\.input_layernorm\.weight \[16\] f32 takes 64 bytes, more than the GPU's tensor limit of 32/,
    );
    assert.throws(
      () => TensorSet.zeros(gpu, config),
      /Parameter model\.embed_tokens\.weight \[29,16\] has rows of 64 bytes, more than the GPU's tensor limit of 32/,
    );
  },
});
