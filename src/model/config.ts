/**
 * Model configuration: Hugging Face `config.json` of Qwen2 / Qwen2.5, Qwen3 and Llama causal LMs, checked and
 * turned into the few numbers the kernels need. Anything Crucible does not implement is refused with the field
 * that decided it.
 */
import { z } from "zod";

/** The architectures Crucible computes. */
export type Architecture = "qwen2" | "qwen3" | "llama";

/** A checked model configuration. Letters as in src/model/shapes.ts. */
export interface ModelConfig {
  /** The family whose layer layout and checkpoint names it follows: qwen2, qwen3 or llama. */
  architecture: Architecture;
  /** V */
  vocabSize: number;
  /** C */
  hiddenSize: number;
  /** I */
  intermediateSize: number;
  /** L */
  numLayers: number;
  /** H */
  numHeads: number;
  /** KV */
  numKvHeads: number;
  /** D */
  headDim: number;
  /** RoPE's base θ (config.json's rope_theta). */
  ropeTheta: number;
  /** The ε added to the mean square in every RMSNorm. */
  rmsNormEps: number;
  /** The LM head reuses the embedding matrix (no lm_head.weight). */
  tieWordEmbeddings: boolean;
  /** Bias on q, k and v projections (Qwen2). */
  attentionBias: boolean;
  /** RMSNorm of each q and k head before RoPE (Qwen3). */
  qkNorm: boolean;
  /**
   * Bias on the MLP's gate, up and down projections. No checkpoint Crucible loads has it (config.json's mlp_bias is
   * refused): tests switch it on to check that training, inference and the ONNX export follow one plan (plan.ts).
   */
  mlpBias?: boolean;
  /** The most positions the model takes (config.json's max_position_embeddings). */
  maxPositions: number;
  /** A critic: one value per position from `score.weight`/`score.bias` instead of an LM head. */
  valueHead: boolean;
  /** The beginning-of-sequence id, where the config names one. */
  bosTokenId?: number;
  /** The ids that end a sequence (config.json's eos_token_id, one or a list). */
  eosTokenIds: number[];
}

const ARCHITECTURES: Record<string, Architecture> = { qwen2: "qwen2", qwen3: "qwen3", llama: "llama" };

const Raw = z.object({
  model_type: z.string(),
  architectures: z.array(z.string()).nullish(),
  vocab_size: z.number().int().positive(),
  hidden_size: z.number().int().positive(),
  intermediate_size: z.number().int().positive(),
  num_hidden_layers: z.number().int().positive(),
  num_attention_heads: z.number().int().positive(),
  num_key_value_heads: z.number().int().positive().optional(),
  head_dim: z.number().int().positive().nullish(),
  rope_theta: z.number().positive().optional(),
  rms_norm_eps: z.number().positive().optional(),
  tie_word_embeddings: z.boolean().optional(),
  attention_bias: z.boolean().optional(),
  max_position_embeddings: z.number().int().positive().optional(),
  hidden_act: z.string().optional(),
  rope_scaling: z.unknown().optional(),
  use_sliding_window: z.boolean().optional(),
  mlp_bias: z.boolean().optional(),
  bos_token_id: z.number().int().nullish(),
  eos_token_id: z.union([z.number().int(), z.array(z.number().int())]).nullish(),
}).passthrough();

/**
 * Checks a parsed `config.json` and returns the model configuration.
 *
 * @example
 * ```ts
 * const cfg = parseModelConfig(JSON.parse(await Deno.readTextFile("model/config.json")));
 * ```
 */
export function parseModelConfig(json: unknown, source = "config.json"): ModelConfig {
  const parsed = Raw.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TypeError(`${source}: field "${issue.path.join(".")}" ${issue.message.toLowerCase()}`);
  }
  const r = parsed.data;
  const architecture = ARCHITECTURES[r.model_type];
  if (!architecture) {
    throw new RangeError(
      `${source}: model_type "${r.model_type}" is not supported; Crucible computes ${
        Object.keys(ARCHITECTURES).join(", ")
      }`,
    );
  }
  refuse(source, "hidden_act", r.hidden_act !== undefined && r.hidden_act !== "silu", `"${r.hidden_act}" (only silu)`);
  refuse(source, "rope_scaling", r.rope_scaling !== undefined && r.rope_scaling !== null, "(only plain RoPE)");
  refuse(source, "use_sliding_window", r.use_sliding_window === true, "true (only full attention)");
  refuse(source, "mlp_bias", r.mlp_bias === true, "true (MLP projections have no bias)");
  // Llama and Qwen3 put attention_bias on o_proj too, which no supported checkpoint uses.
  refuse(
    source,
    "attention_bias",
    architecture !== "qwen2" && r.attention_bias === true,
    "true (only Qwen2 has q/k/v bias)",
  );
  const numKvHeads = r.num_key_value_heads ?? r.num_attention_heads;
  if (r.num_attention_heads % numKvHeads !== 0) {
    throw new RangeError(
      `${source}: num_attention_heads ${r.num_attention_heads} is not a multiple of num_key_value_heads ${numKvHeads}`,
    );
  }
  const headDim = r.head_dim ?? r.hidden_size / r.num_attention_heads;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) {
    throw new RangeError(`${source}: head_dim ${headDim} must be an even integer (RoPE rotates pairs)`);
  }
  const eos = r.eos_token_id;
  return {
    architecture,
    vocabSize: r.vocab_size,
    hiddenSize: r.hidden_size,
    intermediateSize: r.intermediate_size,
    numLayers: r.num_hidden_layers,
    numHeads: r.num_attention_heads,
    numKvHeads,
    headDim,
    ropeTheta: r.rope_theta ?? 10000,
    rmsNormEps: r.rms_norm_eps ?? 1e-6,
    tieWordEmbeddings: r.tie_word_embeddings ?? false,
    attentionBias: architecture === "qwen2",
    qkNorm: architecture === "qwen3",
    maxPositions: r.max_position_embeddings ?? 32768,
    valueHead: (r.architectures ?? []).some((a) => a.endsWith("ForTokenClassification")),
    bosTokenId: r.bos_token_id ?? undefined,
    eosTokenIds: eos === undefined || eos === null ? [] : Array.isArray(eos) ? eos : [eos],
  };
}

function refuse(source: string, field: string, bad: boolean, what: string): void {
  if (bad) throw new RangeError(`${source}: ${field} ${what} is not supported`);
}

/** The `config.json` Hugging Face tools expect for a configuration (inverse of parseModelConfig). */
export function toHfConfig(c: ModelConfig): Record<string, unknown> {
  const names: Record<Architecture, string> = { qwen2: "Qwen2", qwen3: "Qwen3", llama: "Llama" };
  const out: Record<string, unknown> = {
    architectures: [`${names[c.architecture]}For${c.valueHead ? "TokenClassification" : "CausalLM"}`],
    model_type: c.architecture,
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    hidden_act: "silu",
    rope_theta: c.ropeTheta,
    rms_norm_eps: c.rmsNormEps,
    tie_word_embeddings: c.tieWordEmbeddings,
    max_position_embeddings: c.maxPositions,
    torch_dtype: "float32",
  };
  if (c.architecture !== "qwen2") out.attention_bias = false;
  if (c.mlpBias) out.mlp_bias = true;
  if (c.valueHead) Object.assign(out, { id2label: { "0": "LABEL_0" }, label2id: { LABEL_0: 0 } });
  if (c.bosTokenId !== undefined) out.bos_token_id = c.bosTokenId;
  if (c.eosTokenIds.length > 0) out.eos_token_id = c.eosTokenIds.length === 1 ? c.eosTokenIds[0] : c.eosTokenIds;
  return out;
}
