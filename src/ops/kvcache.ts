/** Writing new keys or values into a KV cache at given rows (f32 or f16 cache). */
import source from "../../shaders/kvcache_forward.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";

const SHADER: Shader = { name: "kvcache_forward", source };

const PARAMS = uniforms([["T", "u32"], ["W", "u32"], ["S", "u32"]] as const);

/**
 * Records cache[rows[t]] = src[t] for src [T, ...W] f32 and cache [S, ...W] (f32 or f16); rows >= S are dropped.
 */
export function kvcacheWrite(batch: Batch, src: Tensor, rows: Tensor, cache: Tensor): void {
  const T = rows.size;
  const W = src.size / Math.max(T, 1);
  if (!Number.isInteger(W) || cache.size % W !== 0) {
    throw new TypeError(`KV cache write of [${src.shape}] by ${T} rows does not fit a cache [${cache.shape}]`);
  }
  if (rows.dtype !== "u32" || src.dtype !== "f32") throw new TypeError("KV cache rows must be u32 and src f32");
  const ct = cache.dtype;
  if (ct !== "f32" && ct !== "f16") throw new TypeError(`KV cache must be f32 or f16, got ${ct}`);
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, {
      params: PARAMS,
      template: { ENABLE: ct === "f16" ? "enable f16;" : "", CT: ct },
    }),
    buffers: [src, rows, cache],
    params: { T, W, S: cache.size / W },
    grid: foldGrid(batch.gpu, Math.ceil((T * W) / 64)),
  });
}
