/**
 * Embedding cases: the lookup of a packed batch (T 512 rows of C 896, f32 and f16 tables) and its deterministic
 * backward (scatter by host-side buckets, which uploads three small index tensors per call, as the model does).
 * The table has 32768 rows: Qwen's 151936 x 896 f32 passes the 128 MiB binding limit of lavapipe, and the lookup
 * reads only T rows, so V changes nothing but memory.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { DTYPE_BYTES, empty, fromHost, zeros } from "../src/gpu/tensor.ts";
import { embeddingBackward, embeddingBuckets, embeddingForward } from "../src/ops/embedding.ts";
import { filled, QWEN, releaseAll, tokenIds } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { T, C } = QWEN;
const V = 32768;
const SHAPE = `T${T} C${C} V${V}`;

function cases(gpu: Gpu): BenchCase[] {
  const host = tokenIds(T, V, 11);
  const out: BenchCase[] = (gpu.features.f16 ? ["f32", "f16"] as const : ["f32"] as const).map((dtype) => ({
    kernel: "embedding_forward",
    variant: dtype,
    shape: SHAPE,
    bytes: T * 4 + T * C * (DTYPE_BYTES[dtype] + 4),
    setup(gpu) {
      const ids = fromHost(gpu, host, [T], "u32");
      const table = filled(gpu, [V, C], dtype);
      const x = empty(gpu, [T, C]);
      return {
        record: (batch) => embeddingForward(batch, ids, table, x),
        release: () => releaseAll([ids, table, x]),
      };
    },
  }));
  const buckets = embeddingBuckets(host);
  const U = buckets.tokens.length;
  out.push({
    kernel: "embedding_backward",
    variant: "default",
    shape: SHAPE,
    // dOut read once; each of the U distinct rows of dE read and written.
    bytes: T * C * 4 + U * C * 8,
    setup(gpu) {
      const dOut = filled(gpu, [T, C]);
      const dTable = zeros(gpu, [V, C]);
      return {
        record: (batch) => embeddingBackward(batch, buckets, dOut, dTable),
        release: () => releaseAll([dOut, dTable]),
      };
    },
  });
  return out;
}

registerBench("embedding", cases);
