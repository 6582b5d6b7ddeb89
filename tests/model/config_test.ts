/** config.json parsing and the parameter table, on config files written out as Hugging Face ships them. */
import assert from "node:assert/strict";
import { parseModelConfig, toHfConfig } from "../../src/model/config.ts";
import { LM_HEAD, paramCount, paramTable } from "../../src/model/params.ts";

/** Qwen/Qwen2.5-0.5B config.json. */
export const QWEN25_05B = {
  architectures: ["Qwen2ForCausalLM"],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151643,
  hidden_act: "silu",
  hidden_size: 896,
  initializer_range: 0.02,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 24,
  model_type: "qwen2",
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-06,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  transformers_version: "4.40.1",
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

/** Qwen/Qwen3-0.6B config.json. */
const QWEN3_06B = {
  architectures: ["Qwen3ForCausalLM"],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: "silu",
  hidden_size: 1024,
  initializer_range: 0.02,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  max_window_layers: 28,
  model_type: "qwen3",
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-06,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

/** TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json. */
const TINYLLAMA = {
  architectures: ["LlamaForCausalLM"],
  attention_bias: false,
  bos_token_id: 1,
  eos_token_id: 2,
  hidden_act: "silu",
  hidden_size: 2048,
  initializer_range: 0.02,
  intermediate_size: 5632,
  max_position_embeddings: 2048,
  model_type: "llama",
  num_attention_heads: 32,
  num_hidden_layers: 22,
  num_key_value_heads: 4,
  pretraining_tp: 1,
  rms_norm_eps: 1e-05,
  rope_scaling: null,
  rope_theta: 10000.0,
  tie_word_embeddings: false,
  torch_dtype: "bfloat16",
  use_cache: true,
  vocab_size: 32000,
};

Deno.test("config: Qwen2.5-0.5B parses with q/k/v bias and tied embeddings", () => {
  const c = parseModelConfig(QWEN25_05B);
  assert.equal(c.architecture, "qwen2");
  assert.deepEqual(
    [c.vocabSize, c.hiddenSize, c.intermediateSize, c.numLayers, c.numHeads, c.numKvHeads, c.headDim],
    [151936, 896, 4864, 24, 14, 2, 64],
  );
  assert.deepEqual([c.ropeTheta, c.rmsNormEps, c.tieWordEmbeddings, c.attentionBias, c.qkNorm], [
    1e6,
    1e-6,
    true,
    true,
    false,
  ]);
  assert.deepEqual(c.eosTokenIds, [151643]);
  assert.equal(c.bosTokenId, 151643);
});

Deno.test("config: Qwen3 takes its explicit head_dim and q/k norms; Llama has no biases", () => {
  const q = parseModelConfig(QWEN3_06B);
  assert.deepEqual([q.architecture, q.headDim, q.qkNorm, q.attentionBias], ["qwen3", 128, true, false]);
  assert.equal(q.headDim * q.numHeads, 2048, "Qwen3-0.6B's attention is wider than its hidden size");
  const l = parseModelConfig(TINYLLAMA);
  assert.deepEqual([l.architecture, l.headDim, l.qkNorm, l.attentionBias, l.tieWordEmbeddings], [
    "llama",
    64,
    false,
    false,
    false,
  ]);
  assert.equal(l.rmsNormEps, 1e-5);
});

Deno.test("config: toHfConfig parses back to the same configuration", () => {
  for (const raw of [QWEN25_05B, QWEN3_06B, TINYLLAMA]) {
    const c = parseModelConfig(raw);
    assert.deepEqual(parseModelConfig(toHfConfig(c)), c);
  }
});

Deno.test("config: unsupported settings are refused naming the field that decided it", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ model_type: "mistral" }, /model_type "mistral"/],
    [{ hidden_act: "gelu" }, /hidden_act "gelu"/],
    [{ rope_scaling: { type: "yarn", factor: 4 } }, /rope_scaling/],
    [{ use_sliding_window: true }, /use_sliding_window/],
    [{ num_key_value_heads: 3 }, /num_key_value_heads 3/],
  ];
  for (const [change, message] of cases) {
    assert.throws(() => parseModelConfig({ ...QWEN25_05B, ...change }, "m/config.json"), (e: Error) => {
      assert.ok(e instanceof RangeError, `${JSON.stringify(change)} gave ${e}`);
      assert.match(e.message, message);
      assert.match(e.message, /^m\/config\.json: /);
      return true;
    });
  }
  const { hidden_size: _, ...noHidden } = QWEN25_05B;
  assert.throws(
    () => parseModelConfig(noHidden),
    (e: Error) => e instanceof TypeError && /hidden_size/.test(e.message),
  );
  assert.throws(() => parseModelConfig({ ...QWEN25_05B, vocab_size: "big" }), TypeError);
});

Deno.test("params: parameter counts of real models, worked out by hand from their shapes", () => {
  // Qwen2.5-0.5B: embed 151936*896 = 136,134,656; per layer q 896*896+896, k and v 128*896+128 each,
  // o 896*896, MLP 3*4864*896, two norms 2*896: 14,912,384 * 24 = 357,897,216; final norm 896.
  assert.equal(paramCount(parseModelConfig(QWEN25_05B)), 494_032_768);
  // Qwen3-0.6B: embed 155,582,464; per layer q 2048*1024, k and v 1024*1024, o 1024*2048, MLP 3*3072*1024,
  // norms 2*1024 + q/k norms 2*128: 15,730,944 * 28 = 440,466,432; final norm 1024.
  assert.equal(paramCount(parseModelConfig(QWEN3_06B)), 596_049_920);
  // TinyLlama-1.1B, untied: embed and lm_head 32000*2048 each; per layer 44,044,288 * 22; final norm 2048.
  assert.equal(paramCount(parseModelConfig(TINYLLAMA)), 1_100_048_384);
});

Deno.test("params: the table names Hugging Face tensors in checkpoint order", () => {
  const qwen = paramTable(parseModelConfig({ ...QWEN25_05B, num_hidden_layers: 1 }));
  assert.deepEqual(qwen.map((p) => p.name), [
    "model.embed_tokens.weight",
    "model.layers.0.input_layernorm.weight",
    "model.layers.0.self_attn.q_proj.weight",
    "model.layers.0.self_attn.q_proj.bias",
    "model.layers.0.self_attn.k_proj.weight",
    "model.layers.0.self_attn.k_proj.bias",
    "model.layers.0.self_attn.v_proj.weight",
    "model.layers.0.self_attn.v_proj.bias",
    "model.layers.0.self_attn.o_proj.weight",
    "model.layers.0.post_attention_layernorm.weight",
    "model.layers.0.mlp.gate_proj.weight",
    "model.layers.0.mlp.up_proj.weight",
    "model.layers.0.mlp.down_proj.weight",
    "model.norm.weight",
  ]);
  assert.deepEqual(qwen.find((p) => p.name.endsWith("k_proj.weight"))!.shape, [128, 896]);
  assert.ok(qwen.every((p) => p.decay === (p.init === "normal")), "only matrices decay");
  const q3 = paramTable(parseModelConfig({ ...QWEN3_06B, num_hidden_layers: 1 }));
  assert.deepEqual(q3.find((p) => p.name.endsWith("q_norm.weight"))!.shape, [128]);
  assert.deepEqual(q3.find((p) => p.name.endsWith("o_proj.weight"))!.shape, [1024, 2048]);
  const llama = paramTable(parseModelConfig(TINYLLAMA));
  assert.equal(llama.at(-1)!.name, LM_HEAD);
  assert.ok(!llama.some((p) => p.name.endsWith(".bias")));
});
