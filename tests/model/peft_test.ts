// PEFT-format adapters: what saveAdapterDir writes has PEFT's file names, adapter_config.json fields and tensor names
// (base_model.model.<module>.lora_A.weight, as PeftModel.save_pretrained writes them) and reads back bit for bit; a
// file written the way PEFT writes it (built here from PEFT's naming, not through Crucible's writer) loads; an adapter
// of another base shape, and PEFT features Crucible does not compute, are refused by name; the merged weights
// compute what the adapter does; `loadGpuModel(dir, { adapter })` puts an adapter on a model directory.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { initParams } from "../../src/model/init.ts";
import { loadGpuModel } from "../../src/model/load.ts";
import { initLora, loraScale, type LoraSettings, resolveTargets } from "../../src/model/lora.ts";
import { loraTransformer } from "../../src/model/lora_model.ts";
import { saveModelDir } from "../../src/model/model_dir.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { bindAdapter, loadAdapterDir, mergeAdapter, saveAdapterDir } from "../../src/model/peft.ts";
import { parseSafetensors, serializeSafetensors } from "../../src/model/safetensors.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { Rng } from "../../src/util/random.ts";
import { assertClose } from "../reference/check.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const config = parseModelConfig({
  model_type: "qwen2",
  vocab_size: 23,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
});
const settings: LoraSettings = {
  rank: 4,
  alpha: 8,
  targets: resolveTargets(config, ["q_proj", "v_proj", "down_proj"]),
};

/** An adapter with B away from zero (a trained one). */
function trained(seed: number): Map<string, Float32Array> {
  const rng = new Rng(seed), out = initLora(config, settings, seed);
  for (const [k, v] of out) if (k.endsWith("lora_B.weight")) v.forEach((_, i) => (v[i] = 0.3 * rng.normal()));
  return out;
}

Deno.test("a saved adapter has PEFT's files, config fields and tensor names, and reads back bit for bit", async () => {
  const dir = await Deno.makeTempDir();
  const tensors = trained(1);
  await saveAdapterDir(`${dir}/a`, { config, settings, tensors, base: "Qwen/Qwen2.5-0.5B", extra: { "x.json": 1 } });
  const names = [...Deno.readDirSync(`${dir}/a`)].map((e) => e.name).sort();
  assert.deepEqual(names, ["adapter_config.json", "adapter_model.safetensors", "x.json"]);
  const peft = JSON.parse(Deno.readTextFileSync(`${dir}/a/adapter_config.json`));
  assert.equal(peft.peft_type, "LORA");
  assert.equal(peft.task_type, "CAUSAL_LM");
  assert.equal(peft.r, 4);
  assert.equal(peft.lora_alpha, 8);
  assert.deepEqual(peft.target_modules, ["q_proj", "v_proj", "down_proj"]);
  assert.equal(peft.base_model_name_or_path, "Qwen/Qwen2.5-0.5B");
  assert.equal(peft.bias, "none");
  assert.equal(peft.use_rslora, false);
  const file = parseSafetensors(Deno.readFileSync(`${dir}/a/adapter_model.safetensors`));
  const q = file.tensors.get("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  assert.deepEqual(q?.shape, [4, 16]);
  assert.deepEqual(file.tensors.get("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight")?.shape, [16, 4]);
  assert.equal(file.tensors.size, 2 * 3 * 2);
  assert.equal(q?.stored, "f32");
  const back = bindAdapter(config, await loadAdapterDir(`${dir}/a`));
  assert.deepEqual(back.settings, { ...settings, rslora: false });
  for (const [k, v] of tensors) assert.deepEqual(back.tensors.get(k), v, k);
});

/** An adapter directory as PEFT writes it, made here from PEFT's own naming. */
async function peftWritten(dir: string, shapes: (name: string, shape: number[]) => number[], extra = {}) {
  await Deno.mkdir(dir, { recursive: true });
  const rng = new Rng(9);
  const entries: [string, { shape: number[]; data: Float32Array }][] = [];
  for (let l = 0; l < 2; l++) {
    for (const [group, module, out, inp] of [["self_attn", "k_proj", 8, 16], ["mlp", "up_proj", 24, 16]] as const) {
      for (const [ab, shape] of [["lora_A", [2, inp]], ["lora_B", [out, 2]]] as const) {
        const name = `base_model.model.model.layers.${l}.${group}.${module}.${ab}.weight`;
        const s = shapes(name, [...shape]);
        entries.push([name, { shape: s, data: Float32Array.from({ length: s[0] * s[1] }, () => rng.normal()) }]);
      }
    }
  }
  await Deno.writeFile(`${dir}/adapter_model.safetensors`, serializeSafetensors(entries, { dtype: "bf16" }));
  await Deno.writeTextFile(
    `${dir}/adapter_config.json`,
    JSON.stringify({
      alpha_pattern: {},
      base_model_name_or_path: "Qwen/Qwen2.5-0.5B-Instruct",
      bias: "none",
      exclude_modules: null,
      fan_in_fan_out: false,
      inference_mode: true,
      init_lora_weights: true,
      layers_to_transform: null,
      lora_alpha: 32,
      lora_bias: false,
      lora_dropout: 0.05,
      modules_to_save: null,
      peft_type: "LORA",
      peft_version: "0.17.0",
      r: 2,
      rank_pattern: {},
      target_modules: ["up_proj", "k_proj"],
      task_type: "CAUSAL_LM",
      use_dora: false,
      use_rslora: true,
      ...extra,
    }),
  );
  return new Map(entries.map(([k, t]) => [k.slice("base_model.model.".length), t]));
}

Deno.test("an adapter written as PEFT writes it loads; another base's shape and PEFT features are refused by name", async () => {
  const dir = await Deno.makeTempDir();
  const written = await peftWritten(`${dir}/peft`, (_, s) => s);
  const a = bindAdapter(config, await loadAdapterDir(`${dir}/peft`));
  assert.deepEqual(a.settings, { rank: 2, alpha: 32, targets: ["k_proj", "up_proj"], rslora: true });
  assert.equal(loraScale(a.settings), 32 / Math.sqrt(2));
  // The values as stored (bf16 here, as PEFT saves a bf16 model's adapter).
  const stored = parseSafetensors(Deno.readFileSync(`${dir}/peft/adapter_model.safetensors`)).tensors;
  assert.equal(a.tensors.size, written.size);
  for (const k of written.keys()) assert.deepEqual(a.tensors.get(k), stored.get(`base_model.model.${k}`)!.data, k);
  // A base whose k_proj is wider: the tensor and both shapes are named.
  const wide = (name: string, s: number[]) => name.includes("layers.0.self_attn.k_proj.lora_A") ? [2, 32] : s;
  await peftWritten(`${dir}/wide`, wide);
  await assert.rejects(
    async () => bindAdapter(config, await loadAdapterDir(`${dir}/wide`)),
    (e: Error) =>
      e instanceof TypeError &&
      e.message.includes('tensor "base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight"') &&
      e.message.includes("has shape [2,32] but this model needs [2,16]"),
  );
  await peftWritten(`${dir}/dora`, (_, s) => s, { use_dora: true });
  await assert.rejects(() => loadAdapterDir(`${dir}/dora`), /use_dora true is not supported/);
  await peftWritten(`${dir}/ranks`, (_, s) => s, { rank_pattern: { "k_proj": 4 } });
  await assert.rejects(() => loadAdapterDir(`${dir}/ranks`), /rank_pattern .* is not supported/);
  await assert.rejects(() => loadAdapterDir(`${dir}/none`), /no adapter_config\.json/);
});

async function logitsOf(m: Transformer, seq: number[]): Promise<Float32Array> {
  const out = zeros(m.gpu, [seq.length, config.vocabSize]);
  const batch = new Batch(m.gpu);
  m.forward(batch, new PackedInputs(m.gpu, packSequences([{ ids: seq }])), { logits: out });
  const [r] = await batch.read([out]);
  out.release();
  return r as Float32Array;
}

Deno.test({
  name: "merged weights compute what base plus adapter compute; loadGpuModel puts a PEFT adapter on a model directory",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const dir = await Deno.makeTempDir();
    const base = initParams(config, 4, { std: 0.3 }), adapter = trained(2);
    const seq = [1, 5, 9, 2, 22, 7];
    const lora = loraTransformer(gpu, config, base, { settings, adapter, baseDtype: "f32" });
    const want = await logitsOf(lora, seq);
    const merged = mergeAdapter(config, base, settings, adapter);
    const w = "model.layers.1.mlp.down_proj.weight", n = config.intermediateSize;
    const A = adapter.get("model.layers.1.mlp.down_proj.lora_A.weight")!;
    const B = adapter.get("model.layers.1.mlp.down_proj.lora_B.weight")!;
    let delta = 0;
    for (let j = 0; j < 4; j++) delta += B[3 * 4 + j] * A[j * n + 5];
    assert.equal(merged.get(w)![3 * n + 5], Math.fround(base.get(w)![3 * n + 5] + 2 * delta));
    assert.equal(merged.get("model.norm.weight"), base.get("model.norm.weight"));
    const plain = Transformer.fromHost(gpu, config, merged);
    assertClose("merged logits", await logitsOf(plain, seq), want, { atol: 2e-5, rtol: 1e-4 });
    await saveModelDir(`${dir}/base`, { config, tensors: base });
    await saveAdapterDir(`${dir}/adapter`, { config, settings, tensors: adapter, base: `${dir}/base` });
    const loaded = await loadGpuModel(gpu, `${dir}/base`, { adapter: `${dir}/adapter` });
    assert.ok(loaded.model.lora);
    assertClose("base + adapter from disk", await logitsOf(loaded.model, seq), want, { atol: 2e-3, rtol: 1e-2 });
    for (const m of [lora, plain, loaded.model]) m.weights.release();
    for (const m of [lora, loaded.model]) m.lora!.release();
  },
});
