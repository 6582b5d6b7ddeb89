/**
 * One decoder layer on the GPU, as the decoder plan (plan.ts) lists it: one forward for training and inference
 * alike, over a KV source, and the training backward.
 *
 *   packed  training and scoring: the batch's own keys and values, each token its packed causal range; RoPE rotates
 *           q and k in place; with `keep`, the activations the backward reads are returned instead of released
 *   cache   KV-cached inference: the cache write rotates q and stores rotated k and v at each token's cache row,
 *           then every token attends to its range of cache rows; activations are released as soon as read
 *
 * Every projection is one `project` (weight, bias when the plan has one, LoRA pair when the adapter targets it) and
 * every norm one `rmsnorm`, so a plan entry reaches both paths; a forward that keeps no activations runs the gate and
 * up projections and SwiGLU as one dispatch where that applies and is chosen (fusedGateUp). The backward reads as the
 * forward in reverse. The residual-stream gradient dX is updated in place: dL/dx3 on entry, dL/dx on exit, the two
 * norms adding their share.
 * Weight gradients go to the tensors the gradient set holds (all of them, or a LoRA adapter's A and B).
 */
import type { Batch } from "../gpu/batch.ts";
import { SplitTensor } from "../gpu/split.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { attentionBackward, attentionForward, type AttentionForwardArgs } from "../ops/attention.ts";
import { kvcacheWrite } from "../ops/kvcache.ts";
import { rmsnormBackward, rmsnormForward } from "../ops/rmsnorm.ts";
import { ropeBackward, ropeForward, type RopeTable } from "../ops/rope.ts";
import { fuseGateUp, gateUpSwiglu } from "../ops/gate_up_swiglu.ts";
import { swigluBackward, swigluForward } from "../ops/swiglu.ts";
import { act, linear, linearBackward } from "./linear.ts";
import type { LoraAdapters } from "./lora.ts";
import type { PackedInputs } from "./packing.ts";
import type { DecoderPlan, HeadProjection, Norm, Projection } from "./plan.ts";
import type { TensorSet } from "./weights.ts";

/** What a layer computes with. */
export interface LayerContext {
  plan: DecoderPlan;
  weights: TensorSet;
  rope: RopeTable;
  /** A LoRA adapter on the projections it targets. */
  lora?: LoraAdapters;
}

/** Where a layer's attention finds its keys and values (u32 tensors with one entry per token). */
export type KvSource =
  | { kind: "packed"; inputs: PackedInputs; keep: boolean }
  | {
    kind: "cache";
    /** [2T]: each token's position, then its cache row (>= rows: not stored). */
    idx: Tensor;
    kvStart: Tensor;
    kvEnd: Tensor;
    ranges: NonNullable<AttentionForwardArgs["ranges"]>;
    /** This layer's caches [S, KV, D]. */
    k: Tensor;
    v: Tensor;
  };

/** Activations of one layer's forward that its backward reads. [T, ...] f32. */
export interface LayerActs {
  x: Tensor;
  n1: Tensor;
  rstd1: Tensor;
  /** q and k after their norm and RoPE; v as projected. */
  q: Tensor;
  k: Tensor;
  v: Tensor;
  /** q, k and v before their per-head norm, and its rstd [T · heads], where the plan norms them. */
  qPre?: Tensor;
  kPre?: Tensor;
  vPre?: Tensor;
  rstdQ?: Tensor;
  rstdK?: Tensor;
  rstdV?: Tensor;
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

/** One layer's forward: layer `layer` of the plan from x [T, C] into out [T, C] (both the caller's). */
export interface LayerCall {
  layer: number;
  x: Tensor;
  out: Tensor;
  kv: KvSource;
}

/** Records y = x · Wᵀ (+ bias) (+ residual) (+ the LoRA term) for one projection of the plan. */
function project(batch: Batch, ctx: LayerContext, x: Tensor, p: Projection, y: Tensor, residual?: Tensor): void {
  const w = ctx.weights;
  linear(batch, x, w.stored(p.weight), y, {
    bias: p.bias ? w.get(p.bias) : undefined,
    residual,
    lora: ctx.lora?.pair(p.weight),
  });
}

/**
 * The gate and up weights where one dispatch can do the gate and up projections and SwiGLU of T tokens
 * (src/ops/gate_up_swiglu.ts): both stored whole in one dtype, no bias, no LoRA adapter on either, and the fusion
 * chosen for this shape (fuseGateUp); else undefined, and the layer runs two projections and swigluForward.
 */
function fusedGateUp(
  batch: Batch,
  ctx: LayerContext,
  mlp: { gate: Projection; up: Projection; rows: number },
): { gate: Tensor; up: Tensor } | undefined {
  const { gate, up } = mlp, w = ctx.weights, g = w.stored(gate.weight), u = w.stored(up.weight);
  if (g instanceof SplitTensor || u instanceof SplitTensor || g.dtype !== u.dtype || gate.bias || up.bias) return;
  if (ctx.lora?.pair(gate.weight) || ctx.lora?.pair(up.weight)) return;
  const [N, K] = g.shape;
  return fuseGateUp(batch.gpu, { M: mlp.rows, N, K, wt: g.dtype }) ? { gate: g, up: u } : undefined;
}

/**
 * Records layer `call.layer`'s forward. With a packed source that keeps activations, returns what the backward
 * reads (the caller releases it with releaseActs); otherwise every activation is released and nothing returned.
 */
export function layerForward(batch: Batch, ctx: LayerContext, call: LayerCall): LayerActs | undefined {
  const { x, out, kv } = call;
  const plan = ctx.plan, p = plan.layers[call.layer], w = ctx.weights, eps = plan.eps;
  const T = x.shape[0], C = plan.hidden, D = plan.headDim, H = plan.heads, I = plan.intermediate;
  const keep = kv.kind === "packed" && kv.keep;
  const drop = (...ts: (Tensor | undefined)[]) => {
    if (!keep) { for (const t of ts) t?.release(); }
  };
  const norm = (input: Tensor, n: Norm, y: Tensor, rstd: Tensor) =>
    rmsnormForward(batch, { x: input, w: w.get(n.weight), y, rstd, eps });
  const a: Partial<LayerActs> = { x };
  a.n1 = act(batch, [T, C]);
  a.rstd1 = act(batch, [T]);
  norm(x, p.inputNorm, a.n1, a.rstd1);
  // [T, heads, D] after the projection and, where the plan has one, the per-head norm (pre and rstd kept for it).
  const heads = (h: HeadProjection) => {
    const y = act(batch, [T, h.heads, D]);
    project(batch, ctx, a.n1!, h.proj, y.reshape([T, h.heads * D]));
    if (!h.norm) return { y };
    const normed = act(batch, [T, h.heads, D]), rstd = act(batch, [T * h.heads]);
    norm(y, h.norm, normed, rstd);
    return { y: normed, pre: y, rstd };
  };
  const q = heads(p.q), k = heads(p.k), v = heads(p.v);
  Object.assign(a, { q: q.y, k: k.y, v: v.y, qPre: q.pre, kPre: k.pre, vPre: v.pre });
  Object.assign(a, { rstdQ: q.rstd, rstdK: k.rstd, rstdV: v.rstd });
  drop(a.n1, a.rstd1, q.pre, q.rstd, k.pre, k.rstd, v.pre, v.rstd);
  a.o = act(batch, [T, H, D]);
  a.lse = act(batch, [T, H]);
  if (kv.kind === "packed") {
    const inputs = kv.inputs;
    for (const [t, h] of [[q.y, p.q], [k.y, p.k], [v.y, p.v]] as const) {
      if (h.rope) ropeForward(batch, { x: t, pos: inputs.positions, table: ctx.rope, heads: h.heads });
    }
    const ranges = { kvStart: inputs.kvStart, kvEnd: inputs.kvEnd };
    attentionForward(batch, { q: q.y, k: k.y, v: v.y, ...ranges, o: a.o, lse: a.lse });
  } else {
    if (!p.q.rope || !p.k.rope || p.v.rope) {
      throw new TypeError("The KV cache write rotates q and k and stores v as is; this plan needs another cache write");
    }
    kvcacheWrite(batch, { q: q.y, k: k.y, v: v.y, idx: kv.idx, table: ctx.rope, kCache: kv.k, vCache: kv.v });
    k.y.release();
    v.y.release();
    const ranges = { kvStart: kv.kvStart, kvEnd: kv.kvEnd, ranges: kv.ranges };
    attentionForward(batch, { q: q.y, k: kv.k, v: kv.v, ...ranges, o: a.o, lse: a.lse });
  }
  drop(a.q, a.lse);
  if (kv.kind === "packed") drop(a.k, a.v);
  a.x2 = act(batch, [T, C]);
  project(batch, ctx, a.o.reshape([T, H * D]), p.o, a.x2, x);
  drop(a.o);
  a.n2 = act(batch, [T, C]);
  a.rstd2 = act(batch, [T]);
  norm(a.x2, p.postNorm, a.n2, a.rstd2);
  drop(a.rstd2);
  a.h = act(batch, [T, I]);
  const fused = keep ? undefined : fusedGateUp(batch, ctx, { gate: p.gate, up: p.up, rows: T });
  if (fused) {
    gateUpSwiglu(batch, { x: a.n2, ...fused, h: a.h });
    a.n2.release();
  } else {
    a.g = act(batch, [T, I]);
    a.u = act(batch, [T, I]);
    project(batch, ctx, a.n2, p.gate, a.g);
    project(batch, ctx, a.n2, p.up, a.u);
    drop(a.n2);
    swigluForward(batch, a.g, a.u, a.h);
    drop(a.g, a.u);
  }
  project(batch, ctx, a.h, p.down, out, a.x2);
  drop(a.h, a.x2);
  return keep ? a as LayerActs : undefined;
}

/** One layer's backward: weight gradients accumulate into `grads`; dX goes from dL/dx3 to dL/dx. */
export interface LayerGrad {
  layer: number;
  inputs: PackedInputs;
  acts: LayerActs;
  dX: Tensor;
  grads: TensorSet;
}

/** Records layer `g.layer`'s backward, the forward's steps in reverse. */
export function layerBackward(batch: Batch, ctx: LayerContext, g: LayerGrad): void {
  const { inputs, acts: a, dX, grads: gr } = g;
  const plan = ctx.plan, p = plan.layers[g.layer], w = ctx.weights;
  const T = inputs.tokens, C = plan.hidden, H = plan.heads, KV = plan.kvHeads, D = plan.headDim;
  const I = plan.intermediate;
  // A projection's weight and bias gradients and its adapter's, where the gradient set holds them.
  const dW = (proj: Projection) => ({
    w: w.stored(proj.weight),
    dw: gr.findStored(proj.weight),
    db: proj.bias ? gr.find(proj.bias) : undefined,
    lora: ctx.lora?.grad(proj.weight, gr),
  });
  // A norm's weight and weight gradient (accumulated).
  const dN = (n: Norm) => ({ w: w.get(n.weight), dw: gr.find(n.weight), betaW: 1 });
  const dh = act(batch, [T, I]);
  linearBackward(batch, { dy: dX, x: a.h, dx: dh, ...dW(p.down) });
  const dg = act(batch, [T, I]), du = act(batch, [T, I]);
  swigluBackward(batch, a.g, a.u, dh, dg, du);
  dh.release();
  const dn2 = act(batch, [T, C]);
  linearBackward(batch, { dy: dg, x: a.n2, dx: dn2, ...dW(p.gate) });
  linearBackward(batch, { dy: du, x: a.n2, dx: dn2, accumulate: true, ...dW(p.up) });
  dg.release();
  du.release();
  rmsnormBackward(batch, { dy: dn2, r: a.x2, rstd: a.rstd2, dr: dX, beta: 1, ...dN(p.postNorm) });
  dn2.release();
  // dX is now dL/dx2; the out projection's residual passes it through unchanged.
  const dO = act(batch, [T, H, D]);
  linearBackward(batch, { dy: dX, x: a.o.reshape([T, H * D]), dx: dO.reshape([T, H * D]), ...dW(p.o) });
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
  for (const [t, h] of [[dq, p.q], [dk, p.k], [dv, p.v]] as const) {
    if (h.rope) ropeBackward(batch, { x: t, pos: inputs.positions, table: ctx.rope, heads: h.heads });
  }
  // Back through a per-head norm where the plan has one: the gradient of the projection's output.
  const unnorm = (dy: Tensor, h: HeadProjection, pre?: Tensor, rstd?: Tensor) => {
    if (!h.norm) return dy;
    const dpre = act(batch, [T, h.heads, D]);
    rmsnormBackward(batch, { dy, r: pre!, rstd: rstd!, dr: dpre, ...dN(h.norm) });
    dy.release();
    return dpre;
  };
  const dqIn = unnorm(dq, p.q, a.qPre, a.rstdQ), dkIn = unnorm(dk, p.k, a.kPre, a.rstdK);
  const dvIn = unnorm(dv, p.v, a.vPre, a.rstdV);
  const dn1 = act(batch, [T, C]);
  const flat = (t: Tensor, heads: number) => t.reshape([T, heads * D]);
  linearBackward(batch, { dy: flat(dqIn, H), x: a.n1, dx: dn1, ...dW(p.q.proj) });
  const kv = { x: a.n1, dx: dn1, accumulate: true };
  linearBackward(batch, { dy: flat(dkIn, KV), ...dW(p.k.proj), ...kv });
  linearBackward(batch, { dy: flat(dvIn, KV), ...dW(p.v.proj), ...kv });
  for (const t of [dqIn, dkIn, dvIn]) t.release();
  rmsnormBackward(batch, { dy: dn1, r: a.x, rstd: a.rstd1, dr: dX, beta: 1, ...dN(p.inputNorm) });
  dn1.release();
}
