/**
 * Global gradient norm over many tensors, two deterministic stages, ending in a small `stats` tensor
 * [norm, clip scale, finite, 0] that AdamW reads on the GPU.
 */
import source from "../../shaders/gradnorm.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { empty, type Tensor } from "../gpu/tensor.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import { uniforms } from "../gpu/uniforms.ts";

const SHADER: Shader = { name: "gradnorm", source };

const PARAMS = uniforms([["n", "u32"], ["offset", "u32"], ["maxNorm", "f32"]] as const);

/** Elements summed by one workgroup of the first stage (must match CHUNK in the shader). */
export const GRADNORM_CHUNK = 4096;

/**
 * Records the global L2 norm of `grads` into `stats` [4] f32: norm, min(1, maxNorm / (norm + 1e-6)) (1 when
 * maxNorm <= 0), and 1 if the norm is finite else 0.
 */
export function gradNorm(batch: Batch, grads: readonly Tensor[], stats: Tensor, maxNorm = 0): void {
  if (stats.size < 4 || stats.dtype !== "f32") {
    throw new TypeError(`Gradient stats must be [4] f32, got [${stats.shape}]`);
  }
  const gpu = batch.gpu;
  const chunks = grads.map((g) => Math.ceil(g.size / GRADNORM_CHUNK));
  const total = chunks.reduce((a, b) => a + b, 0);
  const partials = empty(gpu, [Math.max(total, 1)]);
  let offset = 0;
  const partial = kernel(gpu, SHADER, { params: PARAMS, entryPoint: "main_partial" });
  grads.forEach((g, i) => {
    if (g.dtype !== "f32") throw new TypeError(`Gradients must be f32, got ${g.dtype} for tensor ${i}`);
    batch.dispatch({
      kernel: partial,
      buffers: [g, partials],
      params: { n: g.size, offset, maxNorm },
      grid: foldGrid(gpu, chunks[i]),
    });
    offset += chunks[i];
  });
  if (total === 0) batch.clear(partials);
  batch.dispatch({
    kernel: kernel(gpu, SHADER, { params: PARAMS, entryPoint: "main_final" }),
    buffers: [undefined, partials, stats],
    params: { n: total, offset: 0, maxNorm },
    grid: [1],
  });
  partials.release();
}
