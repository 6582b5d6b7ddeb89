/**
 * The KV-cache write of one layer, with RoPE: rotates the new tokens' queries in place and stores their rotated keys
 * and their values at the given cache rows (f32 or f16 cache), in one dispatch.
 */
import source from "../../shaders/kvcache.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import type { RopeTable } from "./rope.ts";

const SHADER: Shader = { name: "kvcache", source };

const PARAMS = uniforms([["T", "u32"], ["H", "u32"], ["KV", "u32"], ["D", "u32"], ["S", "u32"]] as const);

/** Arguments of {@linkcode kvcacheWrite}. */
export interface KvcacheWriteArgs {
  /** [T, H, D] f32 queries, rotated in place. */
  q: Tensor;
  /** [T, KV, D] f32 new keys, read only (the cache gets them rotated). */
  k: Tensor;
  /** [T, KV, D] f32 new values. */
  v: Tensor;
  /** [2T] u32: each token's position (< table.positions), then its cache row (>= S: not stored). */
  idx: Tensor;
  /** The RoPE table the keys are rotated with. */
  table: RopeTable;
  /** [S, KV, D] f32 or f16 key and value caches of one layer. */
  kCache: Tensor;
  /** [S, KV, D] f32 or f16 value cache of the layer (as kCache). */
  vCache: Tensor;
}

/** Records q = rope(q), kCache[rows[t]] = rope(k[t]), vCache[rows[t]] = v[t]. */
export function kvcacheWrite(batch: Batch, a: KvcacheWriteArgs): void {
  const T = a.idx.size / 2, D = a.table.headDim;
  const H = a.q.size / Math.max(T * D, 1), KV = a.k.size / Math.max(T * D, 1);
  const shape = `q [${a.q.shape}], k [${a.k.shape}], v [${a.v.shape}], ${T} tokens of head dimension ${D}`;
  if (!Number.isInteger(T) || !Number.isInteger(H) || !Number.isInteger(KV) || a.v.size !== a.k.size || KV > H) {
    throw new TypeError(`KV cache write: ${shape} do not fit one another`);
  }
  const W = KV * D, ct = a.kCache.dtype;
  if (a.kCache.size % W !== 0 || a.vCache.size !== a.kCache.size || a.vCache.dtype !== ct) {
    throw new TypeError(`KV cache write of ${shape} does not fit caches [${a.kCache.shape}] and [${a.vCache.shape}]`);
  }
  if (a.idx.dtype !== "u32" || [a.q, a.k, a.v].some((x) => x.dtype !== "f32")) {
    throw new TypeError("KV cache write: positions and rows must be u32, q, k and v f32");
  }
  if (ct !== "f32" && ct !== "f16") throw new TypeError(`KV cache must be f32 or f16, got ${ct}`);
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, {
      params: PARAMS,
      template: { ENABLE: ct === "f16" ? "enable f16;" : "", CT: ct },
    }),
    buffers: [a.q, a.k, a.v, a.idx, a.table.cos, a.table.sin, a.kCache, a.vCache],
    params: { T, H, KV, D, S: a.kCache.size / W },
    grid: foldGrid(batch.gpu, Math.ceil((T * H * D) / 2 / 64)),
  });
}
