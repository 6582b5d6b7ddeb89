/**
 * The decoder plan: the one description of a model's layers that every path through the decoder follows. It is
 * derived once from the model config and says, layer by layer, which tensors (by Hugging Face name) each step reads:
 *
 *   n1 = rmsnorm(x) · inputNorm
 *   q, k, v = n1 · Wᵀ (+ bias)            per head: rmsnorm · norm (when the plan has one), RoPE (when `rope`)
 *   o = causal attention(q, k, v)          grouped: H query heads over KV key/value heads, scale 1/√D
 *   x2 = o · Woᵀ (+ bias) + x              n2 = rmsnorm(x2) · postNorm
 *   h = silu(n2 · Wgᵀ (+ b)) · (n2 · Wuᵀ (+ b))                   x3 = h · Wdᵀ (+ b) + x2
 *
 * Its readers: the parameter table (params.ts: which tensors exist), the GPU layer (layer.ts: one forward over a
 * KV source, the packed batch of training or the KV cache of inference, and the training backward) and the ONNX
 * builder (src/onnx/decoder.ts). None of them asks the config which architecture it is: each walks every projection,
 * norm and rotation the plan lists, the same way for every one.
 *
 * Places a model feature must be written: 1, this file. A bias on any projection, a per-head norm on q, k or v,
 * RoPE's frequencies (where scaling would go) are plan entries that all readers already honour; tests/onnx/
 * plan_test.ts switches on a feature no architecture has (biases on the MLP) and checks that training, KV-cached
 * inference and the ONNX graph move together, and that the config's architecture fields are read here alone. A
 * feature that needs a new primitive (sliding-window attention: a key range per token) adds its entry here and
 * that primitive once per backend (a GPU kernel or range rule, an ONNX subgraph).
 */
import { ropeInvFreq } from "../ops/rope.ts";
import type { ModelConfig } from "./config.ts";

/** Names of one layer's tensors, as Hugging Face checkpoints spell them. */
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
    gateBias: `${p}.mlp.gate_proj.bias`,
    up: `${p}.mlp.up_proj.weight`,
    upBias: `${p}.mlp.up_proj.bias`,
    down: `${p}.mlp.down_proj.weight`,
    downBias: `${p}.mlp.down_proj.bias`,
  };
}

export const EMBED = "model.embed_tokens.weight";
export const FINAL_NORM = "model.norm.weight";
export const LM_HEAD = "lm_head.weight";

/** A linear layer y [T, rows] = x [T, cols] · Wᵀ (+ bias [rows]), W [rows, cols] as checkpoints store it. */
export interface Projection {
  weight: string;
  bias?: string;
  rows: number;
  cols: number;
}

/** An RMSNorm's weight [size], over the last dimension: C for a hidden state, D for each head. */
export interface Norm {
  weight: string;
  size: number;
}

/** One of q, k and v: its projection to `heads` heads of D, a per-head norm when it has one, RoPE when `rope`. */
export interface HeadProjection {
  proj: Projection;
  heads: number;
  norm?: Norm;
  rope: boolean;
}

/** One decoder layer, in the order its forward runs. */
export interface LayerPlan {
  inputNorm: Norm;
  q: HeadProjection;
  k: HeadProjection;
  v: HeadProjection;
  /** Attention output [T, H·D] to the residual stream; x is added. */
  o: Projection;
  postNorm: Norm;
  gate: Projection;
  up: Projection;
  /** SwiGLU output [T, I] to the residual stream; the attention block's output is added. */
  down: Projection;
}

/** The whole decoder: embedding, layers, final norm and LM head, with the numbers every layer shares. */
export interface DecoderPlan {
  /** C, H, KV, D, I, V as in src/model/shapes.ts. */
  hidden: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
  /** Every RMSNorm's epsilon. */
  eps: number;
  /** RoPE's inverse frequencies [D/2], f64: position p turns pair (i, i + D/2) by p · invFreq[i]. */
  ropeInvFreq: readonly number[];
  embed: string;
  layers: LayerPlan[];
  finalNorm: Norm;
  /** The LM head [V, C]: the embedding when tied. */
  head: string;
}

/** The plan of a model config: the one place that turns architecture facts into steps. */
export function decoderPlan(c: ModelConfig): DecoderPlan {
  const C = c.hiddenSize, I = c.intermediateSize, D = c.headDim, H = c.numHeads, KV = c.numKvHeads;
  const layers: LayerPlan[] = [];
  for (let l = 0; l < c.numLayers; l++) {
    const n = layerNames(l);
    const proj = (weight: string, bias: string | false, rows: number, cols: number): Projection =>
      bias ? { weight, bias, rows, cols } : { weight, rows, cols };
    const headProj = (w: string, b: string, heads: number, norm: string | false, rope: boolean): HeadProjection => ({
      proj: proj(w, c.attentionBias && b, heads * D, C),
      heads,
      ...(norm ? { norm: { weight: norm, size: D } } : {}),
      rope,
    });
    const mlpBias = c.mlpBias === true;
    layers.push({
      inputNorm: { weight: n.inputNorm, size: C },
      q: headProj(n.q, n.qBias, H, c.qkNorm && n.qNorm, true),
      k: headProj(n.k, n.kBias, KV, c.qkNorm && n.kNorm, true),
      v: headProj(n.v, n.vBias, KV, false, false),
      o: proj(n.o, false, C, H * D),
      postNorm: { weight: n.postNorm, size: C },
      gate: proj(n.gate, mlpBias && n.gateBias, I, C),
      up: proj(n.up, mlpBias && n.upBias, I, C),
      down: proj(n.down, mlpBias && n.downBias, C, I),
    });
  }
  return {
    hidden: C,
    heads: H,
    kvHeads: KV,
    headDim: D,
    intermediate: I,
    vocab: c.vocabSize,
    eps: c.rmsNormEps,
    ropeInvFreq: ropeInvFreq(c.ropeTheta, D),
    embed: EMBED,
    layers,
    finalNorm: { weight: FINAL_NORM, size: C },
    head: c.tieWordEmbeddings ? EMBED : LM_HEAD,
  };
}

/** One tensor of a layer: a norm's weight, a projection's weight matrix or its bias. */
export interface LayerTensor {
  name: string;
  shape: number[];
  kind: "norm" | "weight" | "bias";
}

/** A layer's tensors in checkpoint order: q, k, v (each with its bias), then q/k norms, o, post norm, MLP. */
export function layerTensorList(p: LayerPlan): LayerTensor[] {
  const norm = (x: Norm): LayerTensor => ({ name: x.weight, shape: [x.size], kind: "norm" });
  const proj = (x: Projection): LayerTensor[] => [
    { name: x.weight, shape: [x.rows, x.cols], kind: "weight" },
    ...(x.bias ? [{ name: x.bias, shape: [x.rows], kind: "bias" as const }] : []),
  ];
  const heads = [p.q, p.k, p.v];
  return [
    norm(p.inputNorm),
    ...heads.flatMap((h) => proj(h.proj)),
    ...heads.flatMap((h) => (h.norm ? [norm(h.norm)] : [])),
    ...proj(p.o),
    norm(p.postNorm),
    ...[p.gate, p.up, p.down].flatMap(proj),
  ];
}
