/**
 * KV-cache write cases: one layer's new queries rotated, and its keys (rotated) and values stored (H 14, KV 2, D 64 per
 * token) into a cache of 32 slots x 512 rows, for a decode step (32 tokens, one per slot) and a prefill (512 tokens of
 * one slot), into f32 and f16 caches.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { type DType, DTYPE_BYTES, empty, fromHost } from "../src/gpu/tensor.ts";
import { kvcacheWrite } from "../src/ops/kvcache.ts";
import { ropeTable } from "../src/ops/rope.ts";
import { filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { H, KV, D } = QWEN;
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
        shape: `${kind} T${T} H${H} KV${KV} D${D} into ${SLOTS}x${MAX_LEN}`,
        // idx, q read and written, k and v read, both tables' rows, both caches written.
        bytes: T * (8 + 8 * H * D + 8 * KV * D + 4 * D + 2 * KV * D * DTYPE_BYTES[dtype]),
        setup(gpu) {
          const [q, k, v] = [H, KV, KV].map((heads) => filled(gpu, [T, heads, D]));
          const idx = new Uint32Array(2 * T);
          idx.set(rowsOf[kind].map((r) => r % MAX_LEN));
          idx.set(rowsOf[kind], T);
          const tIdx = fromHost(gpu, idx, [2 * T], "u32");
          const table = ropeTable(gpu, 1e6, D, MAX_LEN);
          const [kCache, vCache] = [0, 1].map(() => empty(gpu, [S, KV, D], dtype));
          return {
            record: (batch) => kvcacheWrite(batch, { q, k, v, idx: tIdx, table, kCache, vCache }),
            release: () => releaseAll([q, k, v, tIdx, table.cos, table.sin, kCache, vCache]),
          };
        },
      };
    })
  );
}

registerBench("kvcache", cases);
