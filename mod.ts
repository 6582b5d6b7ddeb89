/**
 * Crucible's public library API: the WebGPU runtime and the transformer kernels.
 *
 * @example
 * ```ts
 * import { Batch, fromHost, getGpu, matmul, zeros } from "./mod.ts";
 * const gpu = await getGpu();
 * const a = fromHost(gpu, [1, 2, 3, 4], [2, 2]);
 * const c = zeros(gpu, [2, 2]);
 * const batch = new Batch(gpu);
 * matmul(batch, { a, b: a, out: c });
 * const [values] = await batch.read([c]);
 * ```
 */
export { getGpu, type Gpu, type GpuFeatures, hasAdapter, requestGpu } from "./src/gpu/device.ts";
export { Batch, type Dispatch, foldGrid } from "./src/gpu/batch.ts";
export { type Kernel, kernel } from "./src/gpu/pipeline.ts";
export { BufferPool, poolOf, type PoolStats } from "./src/gpu/pool.ts";
export { Rng } from "./src/gpu/random.ts";
export { type DType, empty, fromHost, type HostData, Tensor, write, zeros } from "./src/gpu/tensor.ts";
export { GpuTimer, type Timing } from "./src/gpu/timing.ts";
export { UniformLayout, uniforms } from "./src/gpu/uniforms.ts";
export { biasGrad, matmul, type MatmulArgs } from "./src/ops/matmul.ts";
export { MATMUL_VARIANTS, type MatmulVariant, pickMatmulVariant } from "./src/ops/matmul_variants.ts";
