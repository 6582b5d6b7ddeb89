/**
 * The inference forward with a KV cache: any number of new tokens of any sequences (a prefill, a continuation,
 * or one token per sequence when decoding). Each new token's key and value are written to its cache row first,
 * then every token attends to its range of cache rows, so earlier history is never recomputed. The layers are
 * layer.ts's, over the cache as their KV source: the same plan as training and the ONNX export.
 *
 * Cache layout per layer: k and v [S, KV, D] with S = slots · maxLen; slot s owns rows [s · maxLen, (s+1) · maxLen).
 */
import type { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor, zeros } from "../gpu/tensor.ts";
import { rangeFacts } from "../ops/attention.ts";
import { embeddingForward } from "../ops/embedding.ts";
import { rmsnormForward } from "../ops/rmsnorm.ts";
import { layerForward } from "./layer.ts";
import { act, linear } from "./linear.ts";
import type { Transformer } from "./transformer.ts";

/** Settings of the KV cache's element type (config rollout.kv_cache; a checkpoint's crucible.json keeps its own). */
export const KV_CACHE_SETTINGS = ["auto", "f32", "f16"] as const;

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
  const gpu = batch.gpu, model = cache.model, c = model.config, w = model.weights, eps = model.plan.eps;
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
  rmsnormForward(batch, { x: last, w: w.get(model.plan.finalNorm.weight), y: nf, rstd: rstdF, eps });
  last.release();
  rstdF.release();
  const logits = act(batch, [M, c.vocabSize], "logits");
  linear(batch, nf, w.stored(model.plan.head), logits);
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
  const gpu = batch.gpu, model = cache.model, plan = model.plan;
  const T = t.positions.length, C = plan.hidden;
  const u32 = (a: Uint32Array) => fromHost(gpu, a, [a.length], "u32");
  const posRows = new Uint32Array(2 * T);
  posRows.set(t.positions);
  posRows.set(t.rows, T);
  const host = [u32(posRows), u32(t.kvStart), u32(t.kvEnd)];
  const [idx, kvStart, kvEnd] = host;
  const idTensor = ids ?? u32(t.ids);
  if (!ids) host.push(idTensor);
  const ctx = model.layerContext(cache.maxLen);
  // Decoding (one query per sequence) picks the lane attention kernel on CPU rasterisers.
  const ranges = rangeFacts(t.kvStart, t.kvEnd);
  let x = act(batch, [T, C]);
  embeddingForward(batch, idTensor, model.weights.stored(plan.embed), x);
  for (let l = 0; l < plan.layers.length; l++) {
    const kv = { kind: "cache", idx, kvStart, kvEnd, ranges, k: cache.k[l], v: cache.v[l] } as const;
    const out = act(batch, [T, C]);
    layerForward(batch, ctx, { layer: l, x, out, kv });
    x.release();
    x = out;
  }
  return { x, host };
}
