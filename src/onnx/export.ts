/**
 * A model directory as a Hugging Face ONNX directory, the layout transformers.js and Optimum read:
 *
 *   onnx/model.onnx          the KV-cached decoder (decoder.ts)
 *   config.json              the model's Hugging Face config (plus transformers.js's hint that it is fp32 or fp16)
 *   tokenizer.json, tokenizer_config.json, generation_config.json
 *   crucible.json            the agent's settings, when the checkpoint has them (the play page's prompt)
 */
import { parseModelConfig, toHfConfig } from "../model/config.ts";
import { HF_DIR, type LoadedModel, loadModelDir, stopTokenIds } from "../model/model_dir.ts";
import { SHARD_INDEX } from "../model/safetensors.ts";
import { decoderGraph } from "./decoder.ts";
import { encodeModel } from "./proto.ts";

/** How weights are stored in model.onnx (arithmetic is float32 either way). */
export type ExportDType = "f32" | "f16";

/** What a model type lacks to be exported, for the architectures Crucible is most often asked about. */
const MISSING: Record<string, string> = {
  gpt2: "LayerNorm with bias, learned position embeddings and GELU",
  gpt_neox: "LayerNorm with bias, partial rotary embeddings and parallel attention",
  phi: "LayerNorm with bias, partial rotary embeddings and GELU",
  phi3: "fused qkv and gate_up projections",
  gemma: "RMSNorm scaled by (1 + w), embedding scaling and GELU (tanh)",
  gemma2: "logit soft-capping, sliding-window attention and RMSNorm scaled by (1 + w)",
  mistral: "sliding-window attention",
  mixtral: "mixture-of-experts routing (TopK over experts)",
  qwen2_moe: "mixture-of-experts routing (TopK over experts)",
  qwen3_moe: "mixture-of-experts routing (TopK over experts)",
  bert: "bidirectional attention, LayerNorm and GELU (an encoder, not a decoder)",
  t5: "relative position buckets and an encoder-decoder graph",
};

/** The config.json fields Crucible refuses, and the operation each would need. */
const FIELD_OPS: [RegExp, string][] = [
  [/rope_scaling/, "scaled RoPE (rope_scaling: linear, dynamic, yarn or llama3 frequencies)"],
  [/hidden_act/, "an MLP activation other than SiLU"],
  [/use_sliding_window/, "sliding-window attention"],
  [/mlp_bias/, "biases on the MLP projections"],
  [/attention_bias/, "a bias on the output projection (attention_bias on Llama and Qwen3)"],
];

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** Loads a model for export, turning "no model here" and "not supported" into one message each. */
export async function loadForExport(dir: string): Promise<LoadedModel> {
  const weights = (await exists(`${dir}/model.safetensors`)) || (await exists(`${dir}/${SHARD_INDEX}`));
  if (!(await exists(`${dir}/config.json`)) || !weights) {
    const what = !(await exists(dir)) ? "does not exist" : "holds no model (config.json and weights)";
    throw new Deno.errors.NotFound(`Exporting ${dir}: the directory ${what}. ${HF_DIR}`);
  }
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await Deno.readTextFile(`${dir}/config.json`));
  } catch (e) {
    throw new SyntaxError(`Exporting ${dir}: config.json is not JSON: ${(e as Error).message}`);
  }
  try {
    parseModelConfig(raw, `${dir}/config.json`);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    const type = String(raw.model_type ?? "(no model_type)");
    const arch = Array.isArray(raw.architectures) ? `${raw.architectures[0]} (model_type ${type})` : type;
    const field = FIELD_OPS.find(([re]) => re.test(e.message));
    const missing = field?.[1] ?? MISSING[type] ?? `a ${type} decoder layer`;
    throw new RangeError(
      `Exporting ${dir}: ${arch} is not supported: the exporter has no ONNX graph for ${missing}. ` +
        `It writes Qwen2, Qwen2.5, Qwen3 and Llama decoders (${e.message})`,
    );
  }
  return await loadModelDir(dir);
}

/**
 * Exports a model directory; returns the ONNX file's path and size.
 *
 * @example
 * ```ts
 * await exportModel("models/crucible-tiny", "models/crucible-tiny-onnx", { dtype: "f16" });
 * ```
 */
export async function exportModel(
  dir: string,
  out: string,
  o: { dtype?: ExportDType } = {},
): Promise<{ path: string; bytes: number }> {
  dir = dir.replace(/\/+$/, "");
  out = out.replace(/\/+$/, "");
  const model = await loadForExport(dir);
  const bytes = await onnxBytes(model, o.dtype ?? "f32");
  await Deno.mkdir(`${out}/onnx`, { recursive: true });
  await Deno.writeFile(`${out}/onnx/model.onnx`, bytes);
  const write = (name: string, value: unknown) =>
    Deno.writeTextFile(`${out}/${name}`, JSON.stringify(value, null, 2) + "\n");
  // transformers.js reads its own settings from config.json: the weights' file is the plain model.onnx.
  await write("config.json", {
    ...toHfConfig(model.config),
    "transformers.js_config": { dtype: "fp32", use_external_data_format: false },
  });
  if (model.tokenizer) {
    await write("tokenizer.json", model.tokenizer.files.tokenizer);
    await write("tokenizer_config.json", model.tokenizer.files.config);
  }
  await write("generation_config.json", model.generationConfig ?? { eos_token_id: stopTokenIds(model) });
  for (const extra of ["crucible.json"]) {
    if (await exists(`${dir}/${extra}`)) await Deno.copyFile(`${dir}/${extra}`, `${out}/${extra}`);
  }
  return { path: `${out}/onnx/model.onnx`, bytes: bytes.length };
}

/** The ONNX file of a loaded model, in memory (the onnx engine of `deno task eval` needs no directory). */
export function onnxBytes(model: Pick<LoadedModel, "config" | "tensors">, dtype: ExportDType): Promise<Uint8Array> {
  if (dtype !== "f32" && dtype !== "f16") throw new RangeError(`Exporting: --dtype ${dtype} is not f32 or f16`);
  const graph = decoderGraph(model.config, model.tensors, { f16: dtype === "f16" });
  return encodeModel(graph, { producer: "crucible", docString: `${model.config.architecture} decoder with KV cache` });
}
