/**
 * The parameter table: every tensor of a model, named as in Hugging Face checkpoints, with its shape and how it
 * is initialised and decayed. Allocation, parameter counts, checkpoint I/O and optimizer state all derive from it.
 */
import type { ModelConfig } from "./config.ts";

/**
 * How a fresh parameter is filled. "kaiming" is PEFT's LoRA A: uniform in ±1/√fan_in (kaiming_uniform with a = √5),
 * fan_in being the last dimension.
 */
export type Init = "normal" | "ones" | "zeros" | "kaiming";

/** One parameter tensor. */
export interface ParamSpec {
  /** Hugging Face name, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  name: string;
  shape: number[];
  init: Init;
  /** AdamW weight decay applies (matrices), or not (norms, biases). */
  decay: boolean;
}

/** Names of one layer's tensors, for the transformer's code. */
export function layerNames(l: number) {
  const p = `model.layers.${l}`;
  return {
    inputNorm: `${p}.input_layernorm.weight`,
    q: `${p}.self_attn.q_proj.weight`,
    qBias: `${p}.self_attn.q_proj.bias`,
    k: `${p}.self_attn.k_proj.weight`,
    kBias: `${p}.self_attn.k_proj.bias`,
    v: `${p}.self_attn.v_proj.weight`,
    vBias: `${p}.self_attn.v_proj.bias`,
    qNorm: `${p}.self_attn.q_norm.weight`,
    kNorm: `${p}.self_attn.k_norm.weight`,
    o: `${p}.self_attn.o_proj.weight`,
    postNorm: `${p}.post_attention_layernorm.weight`,
    gate: `${p}.mlp.gate_proj.weight`,
    up: `${p}.mlp.up_proj.weight`,
    down: `${p}.mlp.down_proj.weight`,
  };
}

export const EMBED = "model.embed_tokens.weight";
export const FINAL_NORM = "model.norm.weight";
export const LM_HEAD = "lm_head.weight";
/** A critic's value head, as Hugging Face's *ForTokenClassification with one label names it (verl's critic). */
export const VALUE_HEAD = "score.weight";
export const VALUE_BIAS = "score.bias";

/**
 * Every parameter of a model in checkpoint order. With tied embeddings there is no `lm_head.weight`; a critic (a
 * value head) has `score.weight` and `score.bias` instead of an LM head.
 */
export function paramTable(c: ModelConfig): ParamSpec[] {
  const C = c.hiddenSize, I = c.intermediateSize, D = c.headDim;
  const HD = c.numHeads * D, KD = c.numKvHeads * D;
  const matrix = (name: string, shape: number[]): ParamSpec => ({ name, shape, init: "normal", decay: true });
  const norm = (name: string, n: number): ParamSpec => ({ name, shape: [n], init: "ones", decay: false });
  const bias = (name: string, n: number): ParamSpec => ({ name, shape: [n], init: "zeros", decay: false });
  const out: ParamSpec[] = [matrix(EMBED, [c.vocabSize, C])];
  for (let l = 0; l < c.numLayers; l++) {
    const n = layerNames(l);
    out.push(norm(n.inputNorm, C));
    out.push(matrix(n.q, [HD, C]));
    if (c.attentionBias) out.push(bias(n.qBias, HD));
    out.push(matrix(n.k, [KD, C]));
    if (c.attentionBias) out.push(bias(n.kBias, KD));
    out.push(matrix(n.v, [KD, C]));
    if (c.attentionBias) out.push(bias(n.vBias, KD));
    if (c.qkNorm) out.push(norm(n.qNorm, D), norm(n.kNorm, D));
    out.push(matrix(n.o, [C, HD]));
    out.push(norm(n.postNorm, C));
    out.push(matrix(n.gate, [I, C]), matrix(n.up, [I, C]), matrix(n.down, [C, I]));
  }
  out.push(norm(FINAL_NORM, C));
  if (c.valueHead) {
    // A zero value head: a fresh critic predicts 0 everywhere and learns from the returns.
    out.push({ name: VALUE_HEAD, shape: [1, C], init: "zeros", decay: true }, bias(VALUE_BIAS, 1));
  } else if (!c.tieWordEmbeddings) out.push(matrix(LM_HEAD, [c.vocabSize, C]));
  return out;
}

/** Total number of parameters. */
export function paramCount(c: ModelConfig): number {
  return paramTable(c).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
}
