// LoRA (PEFT's convention) on tiny random models: the adapter's table and settings, the logits and the gradient of
// every A and B against central finite differences of the f64 reference (tests/reference/model.ts with its LoRA
// terms) over a base frozen in f16, a fresh adapter that changes nothing, the base without the adapter as the KL
// reference on the same tensors, and KV-cached inference with the adapter.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import type { Gpu } from "../../src/gpu/device.ts";
import { fromHost, write, zeros } from "../../src/gpu/tensor.ts";
import { type ModelConfig, parseModelConfig } from "../../src/model/config.ts";
import type { HeadGrad } from "../../src/model/head.ts";
import { inferForward, KvCache } from "../../src/model/infer.ts";
import {
  checkLora,
  initLora,
  loraCount,
  loraScale,
  type LoraSettings,
  loraTable,
  resolveTargets,
} from "../../src/model/lora.ts";
import { loraTransformer } from "../../src/model/lora_model.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { paramTable } from "../../src/model/params.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { TensorSet } from "../../src/model/weights.ts";
import { Rng } from "../../src/util/random.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogprobRef, modelLossRef, type RefParams } from "../reference/model.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { BASE } from "./golden.ts";

const QWEN2 = parseModelConfig({ ...BASE, model_type: "qwen2", tie_word_embeddings: false });
const SEQS = [[3, 17, 5, 28, 9, 1], [4, 4, 22, 0], [11]];

function random(specs: { name: string; shape: number[]; init: string }[], seed: number, std = 0.4): RefParams {
  const rng = new Rng(seed);
  return new Map(specs.map((s) => {
    const n = s.shape.reduce((a, b) => a * b, 1), base = s.init === "ones" ? 1 : 0;
    return [s.name, Float64Array.from({ length: n }, () => Math.fround(base + std * rng.normal()))];
  }));
}

const toF32 = (p: RefParams) => new Map([...p].map(([k, v]) => [k, Float32Array.from(v)]));

/** The SFT loss gradient per token: -mask / count. */
function sftGrad(gpu: Gpu, mask: number[]): HeadGrad {
  const count = mask.reduce((a, b) => a + b, 0);
  const dlogp = fromHost(gpu, mask.map((m) => -m / count), [mask.length]);
  const dentropy = zeros(gpu, [mask.length]);
  return (_b, chunk) => ({
    dlogp: dlogp.view(chunk.start, [chunk.count]),
    dentropy: dentropy.view(chunk.start, [chunk.count]),
  });
}

Deno.test("LoRA's table: PEFT's names and shapes, all-linear, A uniform in ±1/√in, B zero", () => {
  const s: LoraSettings = { rank: 4, alpha: 8, targets: resolveTargets(QWEN2, "all-linear") };
  assert.deepEqual(s.targets, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]);
  const table = loraTable(QWEN2, s);
  const shape = (n: string) => table.find((p) => p.name === n)?.shape;
  assert.deepEqual(shape("model.layers.0.self_attn.q_proj.lora_A.weight"), [4, 16]);
  assert.deepEqual(shape("model.layers.0.self_attn.k_proj.lora_B.weight"), [8, 4]);
  assert.deepEqual(shape("model.layers.1.mlp.down_proj.lora_A.weight"), [4, 24]);
  assert.deepEqual(shape("model.layers.1.mlp.gate_proj.lora_B.weight"), [24, 4]);
  assert.equal(table.length, 2 * 7 * 2);
  assert.equal(loraCount(QWEN2, s), 2 * 4 * (16 * 6 + 24 + 16 + 8 + 8 + 16 + 24 + 24 + 16));
  assert.equal(loraScale(s), 2);
  assert.equal(loraScale({ ...s, rslora: true }), 4);
  const init = initLora(QWEN2, s, 5);
  const a = init.get("model.layers.1.mlp.down_proj.lora_A.weight")!;
  assert.ok(a.every((x) => Math.abs(x) <= 1 / Math.sqrt(24)) && a.some((x) => x !== 0));
  assert.ok(init.get("model.layers.1.mlp.down_proj.lora_B.weight")!.every((x) => x === 0));
  assert.deepEqual(resolveTargets(QWEN2, ["v_proj", "self_attn.q_proj"]), ["q_proj", "v_proj"]);
});

Deno.test("LoRA settings are refused with the key and the limit: a rank past a targeted width, an unknown target", () => {
  const targets = resolveTargets(QWEN2, ["q_proj", "k_proj"]);
  assert.throws(
    () => checkLora(QWEN2, { rank: 9, alpha: 16, targets }),
    /model\.lora_rank 9 is larger than the width of k_proj \[8, 16\]: .* at most 8/,
  );
  checkLora(QWEN2, { rank: 8, alpha: 16, targets });
  assert.throws(
    () => resolveTargets(QWEN2, ["q_proj", "qkv_proj"]),
    /model\.target_modules entry "qkv_proj" matches no layer/,
  );
  assert.throws(() => resolveTargets(QWEN2, ["lm_head"]), /entry "lm_head" matches no layer/);
  assert.throws(() => resolveTargets(QWEN2, ["layers.0.self_attn.q_proj"]), /matches q_proj in 1 of 2 layers/);
});

// f32 forward over f16-stored base matrices (the reference uses the same f16-rounded values).
const LOGITS = { atol: 2e-5, rtol: 1e-4 };
const GRAD = { atol: 2e-5, rtol: 1e-3 };

const CASES: [string, ModelConfig, LoraSettings][] = [
  ["qwen2 (q/k/v bias, untied head), all-linear, rank 3", QWEN2, {
    rank: 3,
    alpha: 6,
    targets: resolveTargets(QWEN2, "all-linear"),
  }],
  [
    "qwen3 (q/k norms, tied), q_proj and v_proj, rank 2, rsLoRA",
    parseModelConfig({ ...BASE, model_type: "qwen3", head_dim: 6, tie_word_embeddings: true }),
    { rank: 2, alpha: 5, targets: ["q_proj", "v_proj"], rslora: true },
  ],
];

for (const [name, config, settings] of CASES) {
  Deno.test({
    name: `LoRA on ${name}: logits, loss and the gradient of every A and B match the f64 reference; base in f16`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      // The base as the GPU holds it: matrices rounded to f16, norms and biases f32.
      const base = random(paramTable(config), 7);
      for (const s of paramTable(config)) {
        if (s.init === "normal") base.set(s.name, Float64Array.from(Float16Array.from(base.get(s.name)!)));
      }
      // Both A and B away from zero, so that every gradient is exercised.
      const adapter = random(loraTable(config, settings), 11, 0.5);
      const model = loraTransformer(gpu, config, toF32(base), { settings, adapter: toF32(adapter), baseDtype: "f16" });
      const matrix = paramTable(config).find((s) => s.init === "normal")!.name;
      assert.equal(model.weights.get(matrix).dtype, "f16");
      assert.equal(model.weights.get("model.norm.weight").dtype, "f32");
      const ref = new Map([...base, ...adapter]);
      const batch0 = { seqs: SEQS, lora: { scale: loraScale(settings) } };
      const expected = modelLogprobRef(config, ref, batch0);

      const inputs = new PackedInputs(gpu, packSequences(SEQS.map((ids) => ({ ids }))));
      const logits = zeros(gpu, [inputs.tokens, config.vocabSize]);
      let batch = new Batch(gpu);
      model.forward(batch, inputs, { logits });
      const [gl] = await batch.read([logits]);
      assertClose("logits", gl, expected.logits, LOGITS);

      const grads = TensorSet.zeros(gpu, config, model.lora!.tensors.specs);
      assert.ok([...grads.tensors.keys()].every((k) => /lora_[AB]\.weight$/.test(k)), "gradients of A and B only");
      batch = new Batch(gpu);
      grads.clear(batch);
      const tr = model.forward(batch, inputs, { grads, lossGrad: sftGrad(gpu, expected.mask) });
      const [tlp] = await batch.read([tr.logp]);
      const count = expected.mask.reduce((a, b) => a + b, 0);
      const loss = -Array.from(tlp).reduce((a, v, i) => a + v * expected.mask[i], 0) / count;
      assertClose("loss", [loss], [modelLossRef(config, ref, batch0)], { atol: 1e-5, rtol: 1e-5 });
      const got = await grads.toHost();
      for (const spec of loraTable(config, settings)) {
        const fd = numericGrad(
          (x) => modelLossRef(config, new Map(ref).set(spec.name, x), batch0),
          ref.get(spec.name)!,
        );
        assertClose(`d ${spec.name}`, got.get(spec.name)!, fd, GRAD);
      }
      inputs.release();
      grads.release();
      model.weights.release();
      model.lora!.release();
    },
  });
}

Deno.test({
  name: "LoRA: a fresh adapter changes nothing; the same weights without it are the base; KV-cached inference agrees",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const config = QWEN2, settings = { rank: 4, alpha: 16, targets: resolveTargets(config, "all-linear") };
    const host = toF32(random(paramTable(config), 3));
    const plain = Transformer.fromHost(gpu, config, host);
    const model = loraTransformer(gpu, config, host, {
      settings,
      adapter: initLora(config, settings, 1),
      baseDtype: "f32",
    });
    const reference = new Transformer(gpu, config, model.weights);
    const seq = [5, 9, 2, 28, 17, 4, 4, 12];
    const logitsOf = async (m: Transformer) => {
      const out = zeros(gpu, [seq.length, config.vocabSize]);
      const batch = new Batch(gpu);
      m.forward(batch, new PackedInputs(gpu, packSequences([{ ids: seq }])), { logits: out });
      const [r] = await batch.read([out]);
      out.release();
      return r;
    };
    const want = await logitsOf(plain);
    assert.deepEqual(await logitsOf(model), want, "B = 0: the adapter adds exactly nothing");
    // Train the adapter a little (any B != 0): the adapted model moves, its reference does not.
    const b = model.lora!.tensors.get("model.layers.0.mlp.up_proj.lora_B.weight");
    write(b, Float32Array.from({ length: b.size }, (_, i) => Math.sin(i)));
    const adapted = await logitsOf(model);
    assert.ok(adapted.some((x, i) => Math.abs(x - want[i]) > 1e-3), "a trained adapter changes the logits");
    assert.deepEqual(await logitsOf(reference), want, "the reference is the base, on the same tensors");
    assert.equal(reference.weights, model.weights);
    // The KV-cached path adds the adapter's terms too.
    const cache = new KvCache(gpu, model, 1, 16);
    const batch = new Batch(gpu);
    const n = seq.length, idx = Array.from({ length: n }, (_, i) => i);
    const logits = inferForward(batch, cache, {
      ids: Uint32Array.from(seq),
      positions: Uint32Array.from(idx),
      rows: Uint32Array.from(idx),
      kvStart: new Uint32Array(n),
      kvEnd: Uint32Array.from(idx, (i) => i + 1),
      select: Uint32Array.from(idx),
    });
    const [cached] = await batch.read([logits]);
    assertClose("KV-cached logits with the adapter", cached, adapted, LOGITS);
    cache.release();
    plain.weights.release();
    model.weights.release();
    model.lora!.release();
  },
});
