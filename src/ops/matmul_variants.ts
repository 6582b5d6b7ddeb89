/**
 * The matmul family: one shader, three kinds of block, many block shapes. Which is fast depends on the adapter:
 * CPU rasterisers want large register blocks, no shared memory and as few loads per FMA as possible; real GPUs want
 * shared-memory tiles with small per-thread blocks; decode (a few rows times a large weight) wants a GEMV. The
 * choice comes from a table measured with `deno task bench kernels` (numbers in docs/kernel-timings.md).
 */
import type { Gpu } from "../gpu/device.ts";

/** A block shape of the matmul shader (see the header of shaders/matmul_forward.wgsl). */
export interface MatmulVariant {
  /** The variant's name in tuning tables and benchmarks (e.g. `reg 4x4`). */
  name: string;
  /** "reg": register blocks straight from storage; "tile": shared-memory tiles; "gemv": split-K for few rows. */
  kind: "reg" | "tile" | "gemv";
  /** reg: rows x columns of C per invocation (RM x CN); tile: TM x TN; gemv: rows per workgroup (GM) x 1. */
  tm: number;
  /** Columns of the block (CN, TN; 1 for gemv). */
  tn: number;
  /** Workgroup size x, y. reg: 0 x 1, the adapter's subgroup size decides; gemv: GX x GY. */
  wx: number;
  /** Workgroup size y. */
  wy: number;
  /** K depth of a shared-memory tile (tile kind; 0 otherwise). */
  bk: number;
}

function reg(rm: number, cn: number): MatmulVariant {
  if (cn % 4 !== 0) throw new RangeError(`A reg variant needs columns per invocation in multiples of 4, got ${cn}`);
  return { name: `reg${rm}x${cn}`, kind: "reg", tm: rm, tn: cn, wx: 0, wy: 1, bk: 0 };
}

function tile(tm: number, tn: number, wx: number, wy: number, bk: number): MatmulVariant {
  return { name: `tile${wy * tm}x${wx * tn}_t${tm}x${tn}_k${bk}`, kind: "tile", tm, tn, wx, wy, bk };
}

function gemv(gm: number, gx: number, gy: number): MatmulVariant {
  return { name: `gemv${gm}_w${gx}x${gy}`, kind: "gemv", tm: gm, tn: 1, wx: gx, wy: gy, bk: 0 };
}

/**
 * Every variant the benchmark measures and the tests check.
 *
 * On lavapipe the register blocks win, largest first, and shared-memory tiles and the GEMV lose (their loads are
 * not shared across lanes); those are the candidates for real GPUs, where nothing has been measured yet: run
 * `deno task bench kernels` there and adjust {@linkcode pickMatmulVariant}. The lavapipe table (GFLOP/s, compile
 * times, decode shapes): docs/kernel-timings.md.
 */
export const MATMUL_VARIANTS: readonly MatmulVariant[] = [
  reg(8, 8),
  reg(16, 8),
  reg(32, 8),
  reg(64, 8),
  tile(4, 4, 16, 16, 16),
  tile(8, 8, 8, 8, 16),
  tile(8, 8, 8, 16, 16),
  gemv(8, 64, 4),
];

/** A variant by name; throws a RangeError listing the names. */
export function matmulVariant(name: string): MatmulVariant {
  const v = MATMUL_VARIANTS.find((x) => x.name === name);
  if (!v) {
    throw new RangeError(`Unknown matmul variant "${name}"; known: ${MATMUL_VARIANTS.map((x) => x.name).join(", ")}`);
  }
  return v;
}

/** The sizes a variant is chosen for: C [M, N] = op(A) [M, K] · op(B) [K, N]. */
export interface MatmulShape {
  M: number;
  N: number;
  K: number;
}

/**
 * The variant for a product of this size on this adapter.
 *
 * @example
 * ```ts
 * const v = pickMatmulVariant(gpu, { M: 512, N: 4864, K: 896 }); // reg64x8 on lavapipe
 * ```
 */
export function pickMatmulVariant(gpu: Gpu, shape: MatmulShape): MatmulVariant {
  const { M, N } = shape;
  if (gpu.software) {
    // Loads cost about 20 cycles per lane and element on lavapipe, FMAs about 2: the tallest block that the rows
    // fill, since A is loaded once per subgroup and B once per k whatever the height.
    if (M <= 8) return matmulVariant("reg8x8");
    if (M <= 16) return matmulVariant("reg16x8");
    if (M <= 32) return matmulVariant("reg32x8");
    return matmulVariant("reg64x8");
  }
  // Hardware: not yet measured here (no GPU on the build machines); shapes from gpu.cpp and TFJS/ORT.
  if (M <= 16) return matmulVariant("gemv8_w64x4");
  if (M >= 512 && N >= 512) return matmulVariant("tile128x64_t8x8_k16");
  if (M >= 128 && N >= 128) return matmulVariant("tile64x64_t8x8_k16");
  return matmulVariant("tile64x64_t4x4_k16");
}
