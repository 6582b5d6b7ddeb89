/**
 * The matmul family: one shader, four kinds of block, many block shapes. Which is fast depends on the adapter:
 * CPU rasterisers want large register blocks, no shared memory and as few loads per FMA as possible; real GPUs want
 * shared-memory tiles with register blocks per invocation, and enough workgroups to fill every compute unit (split
 * over K where the output has few tiles); decode (a few rows times a large weight) wants a GEMV or thin tiles. The
 * choice per adapter and shape comes from the autotuner (src/ops/matmul_tune.ts), seeded with the lavapipe table
 * measured with `deno task bench kernels` (numbers in docs/kernel-timings.md).
 */
import type { Gpu } from "../gpu/device.ts";
import type { DType } from "../gpu/tensor.ts";

/** A block shape of the matmul shader (see the header of shaders/matmul_forward.wgsl). */
export interface MatmulVariant {
  /** The variant's name in tuning tables and benchmarks (e.g. `reg 4x4`). */
  name: string;
  /**
   * "reg": register blocks straight from storage; "tile": shared-memory tiles; "gemv": split-K within a workgroup
   * for few rows; "wg": shared-memory tiles with register prefetch, padded rows and an optional split over K.
   */
  kind: "reg" | "tile" | "gemv" | "wg";
  /** reg: rows x columns of C per invocation (RM x CN); tile and wg: TM x TN; gemv: rows per workgroup (GM) x 1. */
  tm: number;
  /** Columns of the block (CN, TN; 1 for gemv). */
  tn: number;
  /** Workgroup size x, y. reg: 0 x 1, the adapter's subgroup size decides; gemv: GX x GY. */
  wx: number;
  /** Workgroup size y. */
  wy: number;
  /** K depth of a shared-memory tile (tile and wg kinds; 0 otherwise). */
  bk: number;
  /**
   * wg only: how many workgroups share one output tile's K, each summing a chunk into a partial buffer that a
   * second dispatch adds up in a fixed order (deterministic) before the epilogue; 1 = no split.
   */
  splits: number;
}

function reg(rm: number, cn: number): MatmulVariant {
  if (cn % 4 !== 0) throw new RangeError(`A reg variant needs columns per invocation in multiples of 4, got ${cn}`);
  return { name: `reg${rm}x${cn}`, kind: "reg", tm: rm, tn: cn, wx: 0, wy: 1, bk: 0, splits: 1 };
}

function tile(tm: number, tn: number, wx: number, wy: number, bk: number): MatmulVariant {
  return { name: `tile${wy * tm}x${wx * tn}_t${tm}x${tn}_k${bk}`, kind: "tile", tm, tn, wx, wy, bk, splits: 1 };
}

function gemv(gm: number, gx: number, gy: number): MatmulVariant {
  return { name: `gemv${gm}_w${gx}x${gy}`, kind: "gemv", tm: gm, tn: 1, wx: gx, wy: gy, bk: 0, splits: 1 };
}

/**
 * A wg variant: a (WY · TM) x (WX · TN) block of C per workgroup of WX x WY invocations, BK deep, split over K in
 * `splits` chunks. Each invocation loads an equal share of both tiles, so the tiles' sizes must divide by the
 * invocations.
 */
function wg(tm: number, tn: number, wx: number, wy: number, bk: number, splits = 1): MatmulVariant {
  const threads = wx * wy, bm = wy * tm, bn = wx * tn;
  if (tm % 4 !== 0 || tn % 4 !== 0 || (bm * bk) % threads !== 0 || (bn * bk) % threads !== 0) {
    throw new RangeError(`A wg variant ${bm}x${bn} of ${tm}x${tn} by ${wx}x${wy} invocations does not tile evenly`);
  }
  const name = `wg${bm}x${bn}_t${tm}x${tn}_k${bk}${splits > 1 ? `_s${splits}` : ""}`;
  return { name, kind: "wg", tm, tn, wx, wy, bk, splits };
}

/**
 * Every variant the benchmark measures and the tests check.
 *
 * On lavapipe the register blocks win, largest first, and shared-memory tiles and the GEMV lose (their loads are
 * not shared across lanes); those are the candidates for real GPUs, where the autotuner times them per shape
 * (src/ops/matmul_tune.ts). The lavapipe table (GFLOP/s, compile times, decode shapes): docs/kernel-timings.md.
 * The wg blocks: 128x128 of 8x8 for large outputs, 64x64 of 4x4 or 8x8 and 32x64 (decode's few dozen rows) for
 * smaller ones, and splits over K for the outputs that have too few tiles to fill a GPU (a weight gradient's K is
 * the batch's tokens; the tiny model's 4,096 x 128 products).
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
  wg(8, 8, 16, 16, 8),
  wg(4, 4, 16, 16, 16),
  wg(8, 8, 8, 8, 8),
  wg(4, 4, 16, 8, 16),
  wg(4, 4, 16, 16, 16, 4),
  wg(4, 4, 16, 16, 16, 16),
  wg(4, 4, 8, 8, 16, 8),
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
  /** Rows of C (and of op(A)). */
  M: number;
  /** Columns of C (and of op(B)). */
  N: number;
  /** The shared dimension. */
  K: number;
  /** Whether A is stored transposed ([K, M]); default false. The autotuner keys its choices by it too. */
  transA?: boolean;
  /** Whether B is stored transposed ([N, K]); default false. */
  transB?: boolean;
  /** A's element type; default f32. */
  at?: DType;
  /** B's element type; default f32. */
  bt?: DType;
}

/** A seeded rule: the first rule whose bounds the shape meets picks its variant. */
export interface SeedRule {
  variant: string;
  maxM?: number;
  minM?: number;
  minN?: number;
}

/**
 * The defaults of the autotuner (src/ops/matmul.ts pickMatmulVariant), by adapter class: what runs where no tuned
 * choice exists, and what a tuned choice must beat by more than noise.
 *
 * software: lavapipe's table, measured (docs/kernel-timings.md). Loads cost about 20 cycles per lane and element
 * there, FMAs about 2: the tallest register block that the rows fill, since A is loaded once per subgroup and B
 * once per k whatever the height. Every reg block sums each output over k in the same order, so these choices give
 * the same bits whichever is picked.
 *
 * hardware: a first guess (shapes from gpu.cpp and TFJS/ORT), the kernels the H200's first figures were taken with
 * (docs/speed.md); the tuner times the rest against it.
 */
export const MATMUL_SEEDS: Readonly<Record<"software" | "hardware", readonly SeedRule[]>> = {
  software: [
    { maxM: 8, variant: "reg8x8" },
    { maxM: 16, variant: "reg16x8" },
    { maxM: 32, variant: "reg32x8" },
    { variant: "reg64x8" },
  ],
  hardware: [
    { maxM: 16, variant: "gemv8_w64x4" },
    { minM: 512, minN: 512, variant: "tile128x64_t8x8_k16" },
    { minM: 128, minN: 128, variant: "tile64x64_t8x8_k16" },
    { variant: "tile64x64_t4x4_k16" },
  ],
};

/**
 * The seeded variant for a product of this size on this adapter class (no tuning).
 *
 * @example
 * ```ts
 * const v = seededMatmulVariant(gpu, { M: 512, N: 4864, K: 896 }); // reg64x8 on lavapipe
 * ```
 */
export function seededMatmulVariant(gpu: Pick<Gpu, "software">, shape: MatmulShape): MatmulVariant {
  const { M, N } = shape;
  const rules = MATMUL_SEEDS[gpu.software ? "software" : "hardware"];
  const rule = rules.find((r) =>
    (r.maxM === undefined || M <= r.maxM) && (r.minM === undefined || M >= r.minM) &&
    (r.minN === undefined || N >= r.minN)
  );
  return matmulVariant(rule?.variant ?? rules[rules.length - 1].variant);
}

/**
 * The variants the autotuner times for a shape. On CPU rasterisers the register blocks only (tiles and the GEMV
 * lose there by 7-30x and take seconds a run; the reg blocks give the same bits). On GPUs every tile kind, the
 * GEMV and the two smallest register blocks for few rows, never the large register blocks (their first compile
 * takes seconds and they spill).
 */
export function matmulCandidates(gpu: Pick<Gpu, "software">, shape: MatmulShape): MatmulVariant[] {
  const few = shape.M <= 16;
  return MATMUL_VARIANTS.filter((v) =>
    gpu.software ? v.kind === "reg" : v.kind === "tile" || v.kind === "wg" ||
      (few && (v.kind === "gemv" || v.name === "reg8x8" || v.name === "reg16x8"))
  );
}

/** A power of two at least n (1 for n <= 1): the bucket of a dimension that varies from step to step. */
export function pow2Bucket(n: number): number {
  return n <= 1 ? 1 : 2 ** Math.ceil(Math.log2(n));
}

/**
 * The autotuner's key of a product, after `prefix` (the op and its sources' hash): transpositions, dtypes, M and K
 * bucketed to powers of two (the token counts of a step, a decode block and a weight gradient land in them), N
 * exact (a layer's width).
 *
 * @example
 * ```ts
 * matmulKey("matmul@1a2b3c4d", { M: 300, N: 896, K: 4864, transB: true }); // "matmul@1a2b3c4d NT f32xf32 M512 N896 K8192"
 * ```
 */
export function matmulKey(prefix: string, s: MatmulShape): string {
  const t = `${s.transA ? "T" : "N"}${s.transB ? "T" : "N"}`;
  return `${prefix} ${t} ${s.at ?? "f32"}x${s.bt ?? "f32"} M${pow2Bucket(s.M)} N${s.N} K${pow2Bucket(s.K)}`;
}
