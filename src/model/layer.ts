/**
 * One decoder layer of a Qwen2-family transformer over a packed batch, forward and backward:
 *
 *   n1 = rmsnorm(x) · w_in                     q, k, v = n1 · W{q,k,v}ᵀ (+ b)      (Qwen3: rmsnorm each q, k head)
 *   q, k = rope(q, k)                          o = attention(q, k, v)
 *   x2 = o · Woᵀ + x                           n2 = rmsnorm(x2) · w_post
 *   h = silu(n2 · Wgᵀ) · (n2 · Wuᵀ)            x3 = h · Wdᵀ + x2
 *
 * The backward reads as the forward in reverse. The residual-stream gradient dX is updated in place: it holds
 * dL/dx3 on entry and dL/dx on exit, the two norms adding their share to it. Weight gradients go to the tensors the
 * gradient set holds (all of them, or a LoRA adapter's A and B with the base frozen).
 */
import type { Batch } from "../gpu/batch.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { attentionBackward, attentionForward } from "../ops/attention.ts";
import { rmsnormBackward, rmsnormForward } from "../ops/rmsnorm.ts";
import { ropeBackward, ropeForward, type RopeTable } from "../ops/rope.ts";
import { swigluBackward, swigluForward } from "../ops/swiglu.ts";
import type { ModelConfig } from "./config.ts";
import { act, linear, linearBackward } from "./linear.ts";
import type { LoraAdapters } from "./lora.ts";
import type { PackedInputs } from "./packing.ts";
import { layerNames } from "./params.ts";
import type { TensorSet } from "./weights.ts";

/** What a layer computes with. */
export interface LayerContext {
  config: ModelConfig;
  weights: TensorSet;
  rope: RopeTable;
  /** A LoRA adapter on the projections it targets. */
  lora?: LoraAdapters;
}

/** Activations of one layer's forward that its backward reads. [T, ...] f32. */
export interface LayerActs {
  x: Tensor;
  n1: Tensor;
  rstd1: Tensor;
  /** q and k after norm (Qwen3) and RoPE; v as projected. */
  q: Tensor;
  k: Tensor;
  v: Tensor;
  /** Qwen3: q and k before their per-head norm, and its rstd. */
  qPre?: Tensor;
  kPre?: Tensor;
  rstdQ?: Tensor;
  rstdK?: Tensor;
  o: Tensor;
  lse: Tensor;
  x2: Tensor;
  n2: Tensor;
  rstd2: Tensor;
  g: Tensor;
  u: Tensor;
  h: Tensor;
}

/** Returns every activation except the input x (owned by the caller) to the pool. */
export function releaseActs(a: LayerActs): void {
  for (const [key, t] of Object.entries(a)) if (key !== "x" && t) (t as Tensor).release();
}

/** Records layer l's forward from x [T, C] into out [T, C]; returns what the backward needs. */
export function layerForward(
  batch: Batch,
  ctx: LayerContext,
  l: number,
  inputs: PackedInputs,
  x: Tensor,
  out: Tensor,
): LayerActs {
  const c = ctx.config, w = ctx.weights, n = layerNames(l);
  const T = inputs.tokens, C = c.hiddenSize, H = c.numHeads, KV = c.numKvHeads, D = c.headDim;
  const I = c.intermediateSize, eps = c.rmsNormEps;
  const lora = (weight: string) => ctx.lora?.pair(weight);
  const a: Partial<LayerActs> = { x };
  a.n1 = act(batch, [T, C]);
  a.rstd1 = act(batch, [T]);
  rmsnormForward(batch, { x, w: w.get(n.inputNorm), y: a.n1, rstd: a.rstd1, eps });
  const bias = (name: string) => (c.attentionBias ? w.get(name) : undefined);
  const proj = (heads: number, weight: string, b: string) => {
    const t = act(batch, [T, heads, D]);
    linear(batch, a.n1!, w.stored(weight), t.reshape([T, heads * D]), { bias: bias(b), lora: lora(weight) });
    return t;
  };
  let q = proj(H, n.q, n.qBias);
  let k = proj(KV, n.k, n.kBias);
  a.v = proj(KV, n.v, n.vBias);
  if (c.qkNorm) {
    a.qPre = q;
    a.kPre = k;
    a.rstdQ = act(batch, [T * H]);
    a.rstdK = act(batch, [T * KV]);
    q = act(batch, [T, H, D]);
    k = act(batch, [T, KV, D]);
    rmsnormForward(batch, { x: a.qPre, w: w.get(n.qNorm), y: q, rstd: a.rstdQ, eps });
    rmsnormForward(batch, { x: a.kPre, w: w.get(n.kNorm), y: k, rstd: a.rstdK, eps });
  }
  ropeForward(batch, { x: q, pos: inputs.positions, table: ctx.rope, heads: H });
  ropeForward(batch, { x: k, pos: inputs.positions, table: ctx.rope, heads: KV });
  a.q = q;
  a.k = k;
  a.o = act(batch, [T, H, D]);
  a.lse = act(batch, [T, H]);
  attentionForward(batch, { q, k, v: a.v, kvStart: inputs.kvStart, kvEnd: inputs.kvEnd, o: a.o, lse: a.lse });
  a.x2 = act(batch, [T, C]);
  linear(batch, a.o.reshape([T, H * D]), w.stored(n.o), a.x2, { residual: x, lora: lora(n.o) });
  a.n2 = act(batch, [T, C]);
  a.rstd2 = act(batch, [T]);
  rmsnormForward(batch, { x: a.x2, w: w.get(n.postNorm), y: a.n2, rstd: a.rstd2, eps });
  a.g = act(batch, [T, I]);
  a.u = act(batch, [T, I]);
  a.h = act(batch, [T, I]);
  linear(batch, a.n2, w.stored(n.gate), a.g, { lora: lora(n.gate) });
  linear(batch, a.n2, w.stored(n.up), a.u, { lora: lora(n.up) });
  swigluForward(batch, a.g, a.u, a.h);
  linear(batch, a.h, w.stored(n.down), out, { residual: a.x2, lora: lora(n.down) });
  return a as LayerActs;
}

/** Records layer l's backward: weight gradients accumulate into `grads`; dX goes from dL/dx3 to dL/dx. */
export function layerBackward(
  batch: Batch,
  ctx: LayerContext,
  l: number,
  inputs: PackedInputs,
  a: LayerActs,
  dX: Tensor,
  grads: TensorSet,
): void {
  const c = ctx.config, w = ctx.weights, n = layerNames(l), gr = grads;
  const T = inputs.tokens, C = c.hiddenSize, H = c.numHeads, KV = c.numKvHeads, D = c.headDim;
  const I = c.intermediateSize;
  // A weight's gradient and its adapter's, where the gradient set holds them.
  const dW = (weight: string) => ({
    w: w.stored(weight),
    dw: gr.findStored(weight),
    lora: ctx.lora?.grad(weight, gr),
  });
  const dh = act(batch, [T, I]);
  linearBackward(batch, { dy: dX, x: a.h, dx: dh, ...dW(n.down) });
  const dg = act(batch, [T, I]), du = act(batch, [T, I]);
  swigluBackward(batch, a.g, a.u, dh, dg, du);
  dh.release();
  const dn2 = act(batch, [T, C]);
  linearBackward(batch, { dy: dg, x: a.n2, dx: dn2, ...dW(n.gate) });
  linearBackward(batch, { dy: du, x: a.n2, dx: dn2, accumulate: true, ...dW(n.up) });
  dg.release();
  du.release();
  const post = { w: w.get(n.postNorm), dr: dX, beta: 1, dw: gr.find(n.postNorm), betaW: 1 };
  rmsnormBackward(batch, { dy: dn2, r: a.x2, rstd: a.rstd2, ...post });
  dn2.release();
  // dX is now dL/dx2; the out projection's residual passes it through unchanged.
  const dO = act(batch, [T, H, D]);
  linearBackward(batch, { dy: dX, x: a.o.reshape([T, H * D]), dx: dO.reshape([T, H * D]), ...dW(n.o) });
  const dq = act(batch, [T, H, D]), dk = act(batch, [T, KV, D]), dv = act(batch, [T, KV, D]);
  attentionBackward(batch, {
    q: a.q,
    k: a.k,
    v: a.v,
    o: a.o,
    lse: a.lse,
    dO,
    kvStart: inputs.kvStart,
    kvEnd: inputs.kvEnd,
    qStart: inputs.qStart,
    qEnd: inputs.qEnd,
    dq,
    dk,
    dv,
  });
  dO.release();
  ropeBackward(batch, { x: dq, pos: inputs.positions, table: ctx.rope, heads: H });
  ropeBackward(batch, { x: dk, pos: inputs.positions, table: ctx.rope, heads: KV });
  let dqIn = dq, dkIn = dk;
  if (c.qkNorm) {
    dqIn = act(batch, [T, H, D]);
    dkIn = act(batch, [T, KV, D]);
    const qn = { w: w.get(n.qNorm), rstd: a.rstdQ!, dw: gr.find(n.qNorm), betaW: 1 };
    rmsnormBackward(batch, { dy: dq, r: a.qPre!, dr: dqIn, ...qn });
    const kn = { w: w.get(n.kNorm), rstd: a.rstdK!, dw: gr.find(n.kNorm), betaW: 1 };
    rmsnormBackward(batch, { dy: dk, r: a.kPre!, dr: dkIn, ...kn });
    dq.release();
    dk.release();
  }
  const dn1 = act(batch, [T, C]);
  const bias = (name: string) => (c.attentionBias ? gr.find(name) : undefined);
  const flat = (t: Tensor, heads: number) => t.reshape([T, heads * D]);
  linearBackward(batch, { dy: flat(dqIn, H), x: a.n1, dx: dn1, db: bias(n.qBias), ...dW(n.q) });
  const kv = { x: a.n1, dx: dn1, accumulate: true };
  linearBackward(batch, { dy: flat(dkIn, KV), db: bias(n.kBias), ...dW(n.k), ...kv });
  linearBackward(batch, { dy: flat(dv, KV), db: bias(n.vBias), ...dW(n.v), ...kv });
  for (const t of [dqIn, dkIn, dv]) t.release();
  const pre = { w: w.get(n.inputNorm), dr: dX, beta: 1, dw: gr.find(n.inputNorm), betaW: 1 };
  rmsnormBackward(batch, { dy: dn1, r: a.x, rstd: a.rstd1, ...pre });
  dn1.release();
}
