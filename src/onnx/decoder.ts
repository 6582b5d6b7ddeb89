/**
 * The ONNX graph of a Crucible model, built by walking the decoder plan (src/model/plan.ts) that the GPU layers
 * walk too: every projection with its bias where the plan has one, every per-head norm and RoPE rotation it lists,
 * grouped-query attention and SwiGLU, the plan's LM head, as a KV-cached decoder in the layout Optimum exports and
 * transformers.js runs:
 *
 *   in   input_ids [B, T] int64, attention_mask [B, P+T] int64, position_ids [B, T] int64,
 *        past_key_values.{l}.key|value [B, KV, P, D] f32
 *   out  logits [B, T, V] f32, present.{l}.key|value [B, KV, P+T, D] f32 (the past with this call's rows appended)
 *
 * Standard opset-17 operators only (Gemm, MatMul, Softmax, ReduceMean, Concat, Slice, ...), so onnxruntime-web's
 * wasm backend runs it as is. Row-major; tokens are flattened to N = B·T rows around the projections, and queries are
 * viewed [B, KV, G, T, D] (G = H / KV) so grouped attention needs no copy of K and V. Query t attends to cache rows
 * j <= P + t whose attention_mask is 1. With `f16`, weights are stored as float16 and cast to float32 inside the
 * graph (onnxruntime folds the casts at load): half the file, float32 arithmetic and float32 inputs and outputs.
 */
import type { ModelConfig } from "../model/config.ts";
import { decoderPlan, type HeadProjection, type Norm, type Projection } from "../model/plan.ts";
import { Graph } from "./graph.ts";

/** Names of the past and present tensors of layer l, as Optimum and transformers.js spell them. */
export function cacheNames(l: number) {
  return {
    pastKey: `past_key_values.${l}.key`,
    pastValue: `past_key_values.${l}.value`,
    presentKey: `present.${l}.key`,
    presentValue: `present.${l}.value`,
  };
}

const FLOAT = 1, BOOL = 9;
const MASKED = -1e9;

/** Builds the decoder graph over a model's parameters (by Hugging Face name). */
export function decoderGraph(c: ModelConfig, tensors: ReadonlyMap<string, Float32Array>, o: { f16?: boolean } = {}) {
  const g = new Graph(), plan = decoderPlan(c);
  const H = plan.heads, KV = plan.kvHeads, D = plan.headDim, C = plan.hidden, G = H / KV, V = plan.vocab;
  const weights = new Map<string, string>();
  const w = (name: string, dims: number[]) => {
    let v = weights.get(name);
    if (v) return v;
    const data = tensors.get(name);
    if (!data) throw new TypeError(`Exporting: tensor "${name}" is missing`);
    v = g.weight(name, dims, data, o.f16);
    if (o.f16) v = g.op("Cast", [v], { to: FLOAT });
    weights.set(name, v);
    return v;
  };
  const ids = g.input("input_ids", "int64", ["batch_size", "sequence_length"]);
  const mask = g.input("attention_mask", "int64", ["batch_size", "total_sequence_length"]);
  const pos = g.input("position_ids", "int64", ["batch_size", "sequence_length"]);
  const bt = g.op("Shape", [ids]);
  const shape = (...rest: number[]) => g.op("Concat", [bt, g.ints(rest)], { axis: 0 });
  const unsqueeze = (x: string, axes: number[]) => g.op("Unsqueeze", [x, g.ints(axes)]);
  // RMSNorm over the last dimension (n.size).
  const rms = (x: string, n: Norm) => {
    const ms = g.op("ReduceMean", [g.op("Mul", [x, x])], { axes: [-1], keepdims: 1 });
    const rstd = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [ms, g.floats([plan.eps])])])]);
    return g.op("Mul", [g.op("Mul", [x, rstd]), w(n.weight, [n.size])]);
  };
  // y [N, rows] = x [N, cols] · W[rows, cols]ᵀ (+ b).
  const linear = (x: string, p: Projection) => {
    const dims = [p.rows, p.cols];
    return g.op("Gemm", p.bias ? [x, w(p.weight, dims), w(p.bias, [p.rows])] : [x, w(p.weight, dims)], { transB: 1 });
  };

  // RoPE tables for this call's positions: [B, 1, T, D], each half repeating the D/2 frequencies.
  const freqs = g.op("Mul", [unsqueeze(g.op("Cast", [pos], { to: FLOAT }), [2]), g.floats([...plan.ropeInvFreq])]);
  const angles = unsqueeze(g.op("Concat", [freqs, freqs], { axis: -1 }), [1]);
  const cos = g.op("Cos", [angles]), sin = g.op("Sin", [angles]);
  const half = (x: string, from: number, to: number) => g.op("Slice", [x, g.ints([from]), g.ints([to]), g.ints([3])]);
  const rope = (x: string) => {
    const rotated = g.op("Concat", [g.op("Neg", [half(x, D / 2, D)]), half(x, 0, D / 2)], { axis: 3 });
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rotated, sin])]);
  };

  // Additive mask [B, 1, 1, T, S]: 0 where query t may see cache row j (j <= P + t, attention_mask 1), else -1e9.
  const scalar = (x: string, i: number) => g.op("Gather", [x, g.ints([i], true)], { axis: 0 });
  const T = scalar(bt, 1), S = scalar(g.op("Shape", [mask]), 1);
  const rows = g.op("Range", [g.op("Sub", [S, T]), S, g.ints([1], true)]);
  const cols = g.op("Range", [g.ints([0], true), S, g.ints([1], true)]);
  const causal = g.op("LessOrEqual", [unsqueeze(cols, [0]), unsqueeze(rows, [1])]);
  const allowed = g.op("And", [causal, unsqueeze(g.op("Cast", [mask], { to: BOOL }), [1])]);
  const bias = unsqueeze(g.op("Where", [allowed, g.floats([0]), g.floats([MASKED])]), [1, 2]);

  let x = g.op("Reshape", [g.op("Gather", [w(plan.embed, [V, C]), ids], { axis: 0 }), g.ints([-1, C])]);
  for (const [l, lp] of plan.layers.entries()) {
    const cache = cacheNames(l);
    const n1 = rms(x, lp.inputNorm);
    // [N, heads·D] -> [B, T, heads, D] (norm each head where the plan says) -> [B, heads, T, D] (rotated where it says).
    const heads = (h: HeadProjection) => {
      let t = g.op("Reshape", [linear(n1, h.proj), shape(h.heads, D)]);
      if (h.norm) t = rms(t, h.norm);
      t = g.op("Transpose", [t], { perm: [0, 2, 1, 3] });
      return h.rope ? rope(t) : t;
    };
    const q = heads(lp.q), k = heads(lp.k), v = heads(lp.v);
    const pastK = g.input(cache.pastKey, "float32", ["batch_size", KV, "past_sequence_length", D]);
    const pastV = g.input(cache.pastValue, "float32", ["batch_size", KV, "past_sequence_length", D]);
    const keys = g.op("Concat", [pastK, k], { axis: 2 }), values = g.op("Concat", [pastV, v], { axis: 2 });
    const present = ["batch_size", KV, "total_sequence_length", D];
    g.output(cache.presentKey, keys, "float32", present);
    g.output(cache.presentValue, values, "float32", present);
    // Scores [B, KV, G, T, S] = q [B, KV, G, T, D] · kᵀ [B, KV, 1, D, S] / sqrt(D) + mask.
    const q5 = g.op("Reshape", [q, g.ints([0, KV, G, -1, D])]);
    const kT = g.op("Transpose", [unsqueeze(keys, [2])], { perm: [0, 1, 2, 4, 3] });
    const scores = g.op("Mul", [g.op("MatMul", [q5, kT]), g.floats([1 / Math.sqrt(D)])]);
    const p = g.op("Softmax", [g.op("Add", [scores, bias])], { axis: -1 });
    const o5 = g.op("MatMul", [p, unsqueeze(values, [2])]);
    const o2 = g.op("Reshape", [
      g.op("Transpose", [g.op("Reshape", [o5, g.ints([0, H, -1, D])])], { perm: [0, 2, 1, 3] }),
      g.ints([-1, H * D]),
    ]);
    x = g.op("Add", [x, linear(o2, lp.o)]);
    const n2 = rms(x, lp.postNorm);
    const gate = linear(n2, lp.gate), up = linear(n2, lp.up);
    const h = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up]);
    x = g.op("Add", [x, linear(h, lp.down)]);
  }
  const nf = rms(x, plan.finalNorm);
  const logits = linear(nf, { weight: plan.head, rows: V, cols: C });
  g.output("logits", g.op("Reshape", [logits, shape(V)]), "float32", ["batch_size", "sequence_length", V]);
  return g;
}
