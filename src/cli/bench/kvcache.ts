/**
 * KV-cache write cases: the keys of one layer (KV 2 x D 64 per token) into a cache of 32 slots x 512 rows, for a
 * decode step (32 tokens, one per slot) and a prefill (512 tokens of one slot), into f32 and f16 caches.
 */
import type { Gpu } from "../../gpu/device.ts";
import { type DType, DTYPE_BYTES, empty, fromHost } from "../../gpu/tensor.ts";
import { kvcacheWrite } from "../../ops/kvcache.ts";
import { filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { KV, D } = QWEN;
const SLOTS = 32, MAX_LEN = 512, S = SLOTS * MAX_LEN;

function cases(gpu: Gpu): BenchCase[] {
  const dtypes: DType[] = gpu.features.f16 ? ["f32", "f16"] : ["f32"];
  const rowsOf = {
    decode: Uint32Array.from({ length: SLOTS }, (_, n) => n * MAX_LEN + 300),
    prefill: Uint32Array.from({ length: MAX_LEN }, (_, t) => 5 * MAX_LEN + t),
  };
  return dtypes.flatMap((dtype) =>
    (["decode", "prefill"] as const).map((kind): BenchCase => {
      const T = rowsOf[kind].length;
      return {
        kernel: "kvcache_write",
        variant: dtype,
        shape: `${kind} T${T} KV${KV} D${D} into ${SLOTS}x${MAX_LEN}`,
        bytes: T * 4 + T * KV * D * (4 + DTYPE_BYTES[dtype]),
        setup(gpu) {
          const src = filled(gpu, [T, KV, D]);
          const rows = fromHost(gpu, rowsOf[kind], [T], "u32");
          const cache = empty(gpu, [S, KV, D], dtype);
          return {
            record: (batch) => kvcacheWrite(batch, src, rows, cache),
            release: () => releaseAll([src, rows, cache]),
          };
        },
      };
    })
  );
}

registerBench("kvcache", cases);
