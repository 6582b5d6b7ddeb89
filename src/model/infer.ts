/**
 * The inference forward with a KV cache: any number of new tokens of any sequences (a prefill, a continuation,
 * or one token per sequence when decoding). Each new token's key and value are written to its cache row first,
 * then every token attends to its range of cache rows, so earlier history is never recomputed.
 *
 * Cache layout per layer: k and v [S, KV, D] with S = slots · maxLen; slot s owns rows [s · maxLen, (s+1) · maxLen).
 */
import type { Batch } from "../gpu/batch.ts";
import type { KV_CACHE_SETTINGS } from "../config/schema.ts";
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor, zeros } from "../gpu/tensor.ts";
import { attentionForward, rangeFacts } from "../ops/attention.ts";
import { embeddingForward } from "../ops/embedding.ts";
import { kvcacheWrite } from "../ops/kvcache.ts";
import { rmsnormForward } from "../ops/rmsnorm.ts";
import { swigluForward } from "../ops/swiglu.ts";
import { act, linear } from "./linear.ts";
import { EMBED, FINAL_NORM, layerNames } from "./params.ts";
import type { Transformer } from "./transformer.ts";

/** A KV cache's element type, or auto: f16 where the adapter has shader-f16, else f32. */
export type CacheSetting = typeof KV_CACHE_SETTINGS[number];

/** The element type a cache setting gives on this adapter; f16 on one without shader-f16 is refused. */
export function cacheDtype(gpu: Gpu, setting: CacheSetting): "f32" | "f16" {
  if (setting === "auto") return gpu.features.f16 ? "f16" : "f32";
  if (setting === "f16" && !gpu.features.f16) {
    throw new TypeError("rollout.kv_cache f16 needs the shader-f16 feature, which this adapter lacks; use auto or f32");
  }
  return setting;
}

/** Per-layer key and value caches. */
export class KvCache {
  readonly k: Tensor[] = [];
  readonly v: Tensor[] = [];

  constructor(
    readonly gpu: Gpu,
    readonly model: Transformer,
    readonly slots: number,
    readonly maxLen: number,
    readonly dtype: "f32" | "f16" = "f32",
  ) {
    const c = model.config;
    const shape = [slots * maxLen, c.numKvHeads, c.headDim];
    for (let l = 0; l < c.numLayers; l++) {
      // Zeroed: attention reads rows between the ranges it walks (weighted 0), and pooled bytes read as f16 may be
      // NaN, which a weight of 0 does not cancel.
      this.k.push(zeros(gpu, shape, dtype, `cache k${l}`));
      this.v.push(zeros(gpu, shape, dtype, `cache v${l}`));
    }
  }

  /** Rows of the whole cache (S); a row index >= rows is dropped by the cache write. */
  get rows(): number {
    return this.slots * this.maxLen;
  }

  release(): void {
    for (const t of [...this.k, ...this.v]) t.release();
  }
}

/** Host-side description of the new tokens of one inference forward. All arrays have one entry per token. */
export interface InferTokens {
  ids: Uint32Array;
  positions: Uint32Array;
  /** Cache row each token's key and value go to (>= cache.rows: not stored). */
  rows: Uint32Array;
  kvStart: Uint32Array;
  kvEnd: Uint32Array;
  /** Token indices whose logits are wanted, in output order. */
  select: Uint32Array;
}

/**
 * Records the forward of new tokens and returns logits [select.length, V] (a GPU-only tensor of this batch).
 * `ids` may instead be a GPU tensor (the previous decode step's samples), so decoding needs no readback.
 */
export function inferForward(batch: Batch, cache: KvCache, t: InferTokens, ids?: Tensor): Tensor {
  const gpu = batch.gpu, model = cache.model, c = model.config, w = model.weights, eps = c.rmsNormEps;
  const { x, host } = layers(batch, cache, t, ids);
  const M = t.select.length, T = t.positions.length, C = c.hiddenSize;
  let last = x;
  if (M !== T || t.select.some((s, i) => s !== i)) {
    // Gather the selected rows with the embedding kernel: the hidden states are a "table" indexed by token.
    const sel = fromHost(gpu, t.select, [M], "u32");
    host.push(sel);
    last = act(batch, [M, C]);
    embeddingForward(batch, sel, x, last);
    x.release();
  }
  const nf = act(batch, [M, C]), rstdF = act(batch, [M]);
  rmsnormForward(batch, { x: last, w: w.get(FINAL_NORM), y: nf, rstd: rstdF, eps });
  last.release();
  rstdF.release();
  const logits = act(batch, [M, c.vocabSize], "logits");
  linear(batch, nf, w.head, logits);
  nf.release();
  // Host-written tensors return to the pool only after this batch is submitted (pool invariant).
  for (const h of host) h.release();
  return logits;
}

/**
 * Records the forward of new tokens for their keys and values alone (a prompt or an environment's reply entering
 * the cache): no final norm and no head, whose logits nobody would read.
 */
export function inferPrefill(batch: Batch, cache: KvCache, t: Omit<InferTokens, "select">): void {
  const { x, host } = layers(batch, cache, { ...t, select: new Uint32Array(0) });
  x.release();
  for (const h of host) h.release();
}

/** The decoder layers over new tokens, keys and values written to the cache: hidden states [T, C]. */
function layers(batch: Batch, cache: KvCache, t: InferTokens, ids?: Tensor): { x: Tensor; host: Tensor[] } {
  const gpu = batch.gpu, model = cache.model, c = model.config, w = model.weights;
  const T = t.positions.length, C = c.hiddenSize, H = c.numHeads, KV = c.numKvHeads, D = c.headDim;
  const I = c.intermediateSize, eps = c.rmsNormEps;
  const u32 = (a: Uint32Array) => fromHost(gpu, a, [a.length], "u32");
  const posRows = new Uint32Array(2 * T);
  posRows.set(t.positions);
  posRows.set(t.rows, T);
  const host = [u32(posRows), u32(t.kvStart), u32(t.kvEnd)];
  const [idx, kvStart, kvEnd] = host;
  const idTensor = ids ?? u32(t.ids);
  if (!ids) host.push(idTensor);
  const rope = model.rope(cache.maxLen);
  // Decoding (one query per sequence) picks the lane attention kernel on CPU rasterisers.
  const ranges = rangeFacts(t.kvStart, t.kvEnd);
  let x = act(batch, [T, C]);
  embeddingForward(batch, idTensor, w.stored(EMBED), x);
  for (let l = 0; l < c.numLayers; l++) {
    const n = layerNames(l);
    const n1 = act(batch, [T, C]), rstd = act(batch, [T]);
    rmsnormForward(batch, { x, w: w.get(n.inputNorm), y: n1, rstd, eps });
    const bias = (name: string) => (c.attentionBias ? w.get(name) : undefined);
    const lora = (weight: string) => model.lora?.pair(weight);
    const proj = (heads: number, weight: string, b: string, qkNorm?: string) => {
      const out = act(batch, [T, heads, D]);
      linear(batch, n1, w.stored(weight), out.reshape([T, heads * D]), { bias: bias(b), lora: lora(weight) });
      if (!qkNorm) return out;
      const normed = act(batch, [T, heads, D]), r = act(batch, [T * heads]);
      rmsnormForward(batch, { x: out, w: w.get(qkNorm), y: normed, rstd: r, eps });
      out.release();
      r.release();
      return normed;
    };
    const q = proj(H, n.q, n.qBias, c.qkNorm ? n.qNorm : undefined);
    const k = proj(KV, n.k, n.kBias, c.qkNorm ? n.kNorm : undefined);
    const v = proj(KV, n.v, n.vBias);
    n1.release();
    kvcacheWrite(batch, { q, k, v, idx, table: rope, kCache: cache.k[l], vCache: cache.v[l] });
    k.release();
    v.release();
    const o = act(batch, [T, H, D]), lse = act(batch, [T, H]);
    attentionForward(batch, { q, k: cache.k[l], v: cache.v[l], kvStart, kvEnd, o, lse, ranges });
    q.release();
    lse.release();
    const x2 = act(batch, [T, C]);
    linear(batch, o.reshape([T, H * D]), w.stored(n.o), x2, { residual: x, lora: lora(n.o) });
    o.release();
    x.release();
    const n2 = act(batch, [T, C]);
    rmsnormForward(batch, { x: x2, w: w.get(n.postNorm), y: n2, rstd, eps });
    rstd.release();
    const g = act(batch, [T, I]), up = act(batch, [T, I]), h = act(batch, [T, I]);
    linear(batch, n2, w.stored(n.gate), g, { lora: lora(n.gate) });
    linear(batch, n2, w.stored(n.up), up, { lora: lora(n.up) });
    n2.release();
    swigluForward(batch, g, up, h);
    g.release();
    up.release();
    x = act(batch, [T, C]);
    linear(batch, h, w.stored(n.down), x, { residual: x2, lora: lora(n.down) });
    h.release();
    x2.release();
  }
  return { x, host };
}
