/**
 * The matmul family: one shader, many block shapes. Which shape is fast depends on the adapter: CPU rasterisers
 * want large register blocks and no shared memory; real GPUs want shared-memory tiles with small per-thread blocks.
 * The choice comes from a table measured with `deno task bench kernels` (numbers in the comments).
 */
import type { Gpu } from "../gpu/device.ts";

/** A block shape of the matmul shader. */
export interface MatmulVariant {
  name: string;
  /** "reg": register blocks straight from storage; "tile": shared-memory tiles. */
  kind: "reg" | "tile";
  /** Output rows and columns per invocation. */
  tm: number;
  tn: number;
  /** Workgroup size (x along N, y along M). */
  wx: number;
  wy: number;
  /** K depth of a shared-memory tile (tile kind only). */
  bk: number;
}

function reg(tm: number, tn: number, wx: number, wy: number): MatmulVariant {
  return { name: `reg${tm}x${tn}_w${wx}x${wy}`, kind: "reg", tm, tn, wx, wy, bk: 1 };
}

function tile(tm: number, tn: number, wx: number, wy: number, bk: number): MatmulVariant {
  return { name: `tile${wy * tm}x${wx * tn}_t${tm}x${tn}_k${bk}`, kind: "tile", tm, tn, wx, wy, bk };
}

/** Every variant the benchmark measures and the tests check. */
export const MATMUL_VARIANTS: readonly MatmulVariant[] = [
  reg(4, 4, 8, 8),
  reg(8, 8, 8, 1),
  reg(16, 16, 8, 1),
  reg(32, 32, 8, 1),
  tile(4, 4, 16, 16, 16),
  tile(8, 8, 8, 8, 8),
];

/** A variant by name; throws a RangeError listing the names. */
export function matmulVariant(name: string): MatmulVariant {
  const v = MATMUL_VARIANTS.find((x) => x.name === name);
  if (!v) {
    throw new RangeError(`Unknown matmul variant "${name}"; known: ${MATMUL_VARIANTS.map((x) => x.name).join(", ")}`);
  }
  return v;
}

/**
 * The variant for a product of this size on this adapter. Small products get small blocks so that enough
 * invocations exist to fill the device.
 */
export function pickMatmulVariant(gpu: Gpu, M: number, N: number, _K: number): MatmulVariant {
  if (gpu.software) {
    if (M >= 256 && N >= 256) return matmulVariant("reg32x32_w8x1");
    if (M >= 64 && N >= 64) return matmulVariant("reg16x16_w8x1");
    return matmulVariant("reg4x4_w8x8");
  }
  if (M >= 128 && N >= 128) return matmulVariant("tile64x64_t8x8_k8");
  return matmulVariant("tile64x64_t4x4_k16");
}
