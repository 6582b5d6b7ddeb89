/**
 * Inputs of the benchmark cases: deterministic fills (no generator state to keep in step across cases), token ids,
 * and the model-like sizes every case module shares.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { Rng } from "../src/util/random.ts";
import { type DType, fromHost, type Tensor } from "../src/gpu/tensor.ts";

/** Qwen2.5-0.5B's sizes (C, I, H, KV, D, V) and the packed batch of T tokens the kernel cases use. */
export const QWEN = { C: 896, I: 4864, H: 14, KV: 2, D: 64, V: 151936, T: 512 } as const;

/** Values in [-scale/2, scale/2): a fixed pattern, cheap for hundreds of millions of elements. */
export function pattern(n: number, scale = 1, phase = 0): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (((i + phase) * 7919) % 1009) / 1009 * scale - scale / 2;
  return out;
}

/** A tensor filled with {@linkcode pattern}. */
export function filled(gpu: Gpu, shape: readonly number[], dtype: DType = "f32", scale = 1): Tensor {
  return fromHost(gpu, pattern(shape.reduce((a, b) => a * b, 1), scale), shape, dtype);
}

/** A tensor of one value. */
export function constant(gpu: Gpu, shape: readonly number[], value: number): Tensor {
  return fromHost(gpu, new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(value), shape);
}

/** Normal(0, std) values from a seeded generator (logits that look like a model's: a few tokens stand out). */
export function normals(n: number, std: number, seed: number): Float32Array {
  const rng = new Rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = std * rng.normal();
  return out;
}

/** `n` token ids drawn uniformly from [0, V). */
export function tokenIds(n: number, V: number, seed: number): Uint32Array {
  const rng = new Rng(seed);
  return Uint32Array.from({ length: n }, () => rng.int(V));
}

/** Releases tensors (for a case's `release`). */
export function releaseAll(tensors: readonly Tensor[]): void {
  for (const t of tensors) t.release();
}
