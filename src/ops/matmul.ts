/**
 * Matmul: C = alpha · op(A) · op(B) + bias + R + beta · C, batched, in every transposition a linear layer's
 * forward and backward need, with f32 or f16 inputs and f32 accumulation. Plus the bias gradient.
 *
 * A linear layer y = x · Wᵀ + b with x [T, K], W [N, K]:
 *   forward  y  = matmul(x, W, transB)               [T, N]
 *   backward dx = matmul(dy, W)                      [T, K]
 *            dW = matmul(dy, x, transA)              [N, K]   (dy stored [T, N] = [K', M'])
 *            db = biasGrad(dy)                       [N]
 *
 * The register blocks of each kernel are written out as straight-line WGSL by matmul_slots.ts (see the shader's
 * header for why); everything else lives in shaders/matmul_forward.wgsl. Pipelines are cached per device under a
 * short key, so the generated code is built once per variant, transposition and dtype pair. Which variant runs a
 * product is the autotuner's choice for this adapter and shape ({@linkcode pickMatmulVariant}).
 */
import forwardSource from "../../shaders/matmul_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/matmul_backward.wgsl" with { type: "text" };
import { type Batch, foldGrid, type Grid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { cachedKernel, type Kernel, kernel, type Shader } from "../gpu/pipeline.ts";
import { type DType, empty, fromHost, type Tensor } from "../gpu/tensor.ts";
import { timeRecorded } from "../gpu/timing.ts";
import { textHash, type TuneChoice, type TuneJob, tunerOf } from "../gpu/tuner.ts";
import { uniforms } from "../gpu/uniforms.ts";
import {
  MATMUL_VARIANTS,
  matmulCandidates,
  matmulKey,
  type MatmulShape,
  type MatmulVariant,
  matmulVariant,
  seededMatmulVariant,
} from "./matmul_variants.ts";
import { MATMUL_IDLE, MATMUL_SLOTS_TEXT, matmulSlots, PART_BINDING } from "./matmul_slots.ts";
import { fixedSubgroupSize } from "./wgsl.ts";

const FORWARD_SHADER: Shader = { name: "matmul_forward", source: forwardSource };
const BACKWARD_SHADER: Shader = { name: "matmul_backward", source: backwardSource };

const PARAMS = uniforms(
  [
    ["M", "u32"],
    ["N", "u32"],
    ["K", "u32"],
    ["strideA", "u32"],
    ["strideB", "u32"],
    ["strideC", "u32"],
    ["strideR", "u32"],
    ["alpha", "f32"],
    ["beta", "f32"],
    ["hasBias", "u32"],
    ["hasResidual", "u32"],
    ["lda", "u32"],
    ["colA", "u32"],
    ["ldc", "u32"],
    ["colC", "u32"],
    ["splits", "u32"],
    ["kChunk", "u32"],
    ["count", "u32"],
  ] as const,
);

const BIAS_PARAMS = uniforms([["rows", "u32"], ["N", "u32"], ["beta", "f32"]] as const);

/**
 * Arguments of {@linkcode matmul}. Shapes: A [..., M, K] ([..., K, M] if transA), B [..., K, N] ([..., N, K] if
 * transB).
 */
export interface MatmulArgs {
  /** A [..., M, K] f32 or f16 ([..., K, M] with transA). */
  a: Tensor;
  /** B [..., K, N] f32 or f16 ([..., N, K] with transB). */
  b: Tensor;
  /** Output [..., M, N], f32. Leading dimensions are the batch; A, B or R without them are broadcast. */
  out: Tensor;
  /** A is stored transposed. */
  transA?: boolean;
  /** B is stored transposed (a weight [out, in] times x: transB). */
  transB?: boolean;
  /** [N] f32, added to every row. */
  bias?: Tensor;
  /** [..., M, N] f32, added to the product (a residual connection). */
  residual?: Tensor;
  /** Scales the product: out = alpha · A·B (+ bias, residual) + beta · out (default 1). */
  alpha?: number;
  /** 0 overwrites `out`; 1 accumulates into it (gradient accumulation). */
  beta?: number;
  /** Overrides the adapter's tuned choice (tests and benchmarks). */
  variant?: MatmulVariant;
  /**
   * op(A) reads only the stored columns [start, start + count) of A (a column block of a wider matrix: the slice of
   * dy that belongs to one row part of a split weight). Not batched.
   */
  aCols?: readonly [start: number, count: number];
  /** C, and the bias and residual with it, are the columns [start, start + count) of `out`'s rows. Not batched. */
  outCols?: readonly [start: number, count: number];
}

/**
 * Invocations per workgroup of the reg kernel, and whether they share A through subgroupBroadcast: only where the
 * adapter has subgroups of one fixed size ({@linkcode fixedSubgroupSize}), which the workgroup then is, and where
 * the variant's epilogue stage (RM x CN floats per lane) fits in workgroup memory at that size; else 8 lanes that
 * each load their own A.
 */
export function matmulRegLanes(gpu: Gpu, v?: MatmulVariant): { lanes: number; share: boolean } {
  const size = fixedSubgroupSize(gpu);
  const fits = !v || v.tm * v.tn * size * 4 <= gpu.limits.maxComputeWorkgroupStorageSize;
  if (size > 0 && fits) return { lanes: size, share: true };
  return { lanes: 8, share: false };
}

const ENTRY = { reg: "main_reg", tile: "main_tile", gemv: "main_gemv", wg: "main_wg" } as const;

/** The kernel for one variant, transposition and input dtype pair (cached per device). */
export function matmulKernel(
  gpu: Gpu,
  v: MatmulVariant,
  opts: { transA: boolean; transB: boolean; at: DType; bt: DType },
): Kernel {
  const { transA, transB, at, bt } = opts;
  for (const t of [at, bt]) {
    if (t !== "f32" && t !== "f16") throw new TypeError(`Matmul inputs must be f32 or f16, got ${t}`);
  }
  if ((at === "f16" || bt === "f16") && !gpu.features.f16) {
    throw new TypeError("Matmul with f16 inputs needs the shader-f16 feature, which this adapter lacks");
  }
  const label = `matmul_forward ${v.name} ${transA ? "T" : "N"}${transB ? "T" : "N"} ${at}x${bt}`;
  return cachedKernel(gpu, label, () => {
    const { lanes, share } = matmulRegLanes(gpu, v);
    return kernel(gpu, FORWARD_SHADER, {
      params: PARAMS,
      entryPoint: ENTRY[v.kind],
      template: {
        ...matmulSlots(v, lanes, share),
        ENABLE: at === "f16" || bt === "f16" ? "enable f16;" : "",
        AT: at,
        BT: bt,
      },
      constants: { TRANS_A: transA, TRANS_B: transB },
      label,
    });
  });
}

/** The reduction of a wg variant's split, with the same input dtypes (f16 needs its enable directive). */
function reduceKernel(gpu: Gpu, at: DType, bt: DType): Kernel {
  const label = `matmul_forward reduce ${at}x${bt}`;
  return cachedKernel(gpu, label, () =>
    kernel(gpu, FORWARD_SHADER, {
      params: PARAMS,
      entryPoint: "main_reduce",
      template: {
        ...MATMUL_IDLE,
        PART: PART_BINDING,
        ENABLE: at === "f16" || bt === "f16" ? "enable f16;" : "",
        AT: at,
        BT: bt,
      },
      label,
    }));
}

/**
 * How a wg variant cuts K for this product: `splits` chunks of `kChunk` (a multiple of BK, no chunk empty), fewer
 * than the variant asks where K is short or where the partial sums [count, splits, M, N] would pass the tensor
 * limit; 1 chunk of all K otherwise (and for every other kind).
 */
export function matmulSplit(
  gpu: Gpu,
  v: MatmulVariant,
  shape: { M: number; N: number; K: number; count: number },
): { splits: number; kChunk: number } {
  const { M, N, K, count } = shape;
  const fit = Math.floor(gpu.tensorLimit / Math.max(4 * M * N * count, 1));
  const want = Math.min(v.splits, Math.ceil(K / Math.max(v.bk, 1)), fit);
  if (v.kind !== "wg" || want <= 1) return { splits: 1, kChunk: Math.max(K, 1) };
  const kChunk = Math.ceil(K / want / v.bk) * v.bk;
  return { splits: Math.ceil(K / kChunk), kChunk };
}

/** Workgroup grid of a variant for C [count, M, N] (wg: times its splits, from {@linkcode matmulSplit}). */
export function matmulGrid(
  gpu: Gpu,
  v: MatmulVariant,
  shape: { M: number; N: number; count: number; transB: boolean; splits?: number },
): Grid {
  const { M, N, count } = shape;
  if (v.kind === "reg") return [Math.ceil(N / (matmulRegLanes(gpu, v).lanes * v.tn)), Math.ceil(M / v.tm), count];
  if (v.kind === "tile") return [Math.ceil(N / (v.wx * v.tn)), Math.ceil(M / (v.wy * v.tm)), count];
  if (v.kind === "wg") return [Math.ceil(N / (v.wx * v.tn)), Math.ceil(M / (v.wy * v.tm)), count * (shape.splits ?? 1)];
  return [Math.ceil(N / (shape.transB ? v.wy : v.wx)), Math.ceil(M / v.tm), count];
}

function lastTwo(t: Tensor, what: string): [number, number, number] {
  if (t.shape.length < 2) throw new TypeError(`Matmul ${what} must have at least 2 dimensions, got [${t.shape}]`);
  const r = t.shape[t.shape.length - 2];
  const c = t.shape[t.shape.length - 1];
  return [r, c, r * c === 0 ? 1 : t.size / (r * c)];
}

/** [start, count] of a column block of stored rows `width` wide; the whole row without one. */
function columnBlock(block: MatmulArgs["aCols"], width: number, what: string): [number, number] {
  if (!block) return [0, width];
  const [start, count] = block;
  if (!Number.isInteger(start) || !Number.isInteger(count) || start < 0 || count < 0 || start + count > width) {
    throw new RangeError(`Matmul ${what} columns [${start}, +${count}) are outside its rows of ${width}`);
  }
  return [start, count];
}

/** Records C = alpha · op(A) · op(B) (+ bias) (+ residual) (+ beta · C). */
export function matmul(batch: Batch, args: MatmulArgs): void {
  const { a, b, out } = args;
  const transA = args.transA ?? false;
  const transB = args.transB ?? false;
  const [ar, lda, aBatch] = lastTwo(a, "A");
  const [br, bc, bBatch] = lastTwo(b, "B");
  const [cr, ldc, count] = lastTwo(out, "C");
  const [colA, ac] = columnBlock(args.aCols, lda, "A");
  const [colC, cc] = columnBlock(args.outCols, ldc, "C");
  const [M, K] = transA ? [ac, ar] : [ar, ac];
  const [K2, N] = transB ? [bc, br] : [br, bc];
  if ((args.aCols || args.outCols) && count !== 1) {
    throw new TypeError(`Matmul column blocks are not batched, but C [${out.shape}] holds ${count} matrices`);
  }
  if (K !== K2 || cr !== M || cc !== N) {
    throw new TypeError(
      `Matmul shapes do not agree: A [${a.shape}]${transA ? "ᵀ" : ""} · B [${b.shape}]${
        transB ? "ᵀ" : ""
      } -> C [${out.shape}]`,
    );
  }
  for (const [t, n] of [[aBatch, "A"], [bBatch, "B"]] as const) {
    if (t !== 1 && t !== count) throw new TypeError(`Matmul ${n} has batch ${t} but C has ${count}`);
  }
  if (out.dtype !== "f32") throw new TypeError(`Matmul output must be f32, got ${out.dtype}`);
  if (args.bias && (args.bias.size !== ldc || args.bias.dtype !== "f32")) {
    throw new TypeError(`Matmul bias must be [${ldc}] f32, got [${args.bias.shape}] ${args.bias.dtype}`);
  }
  const residual = args.residual;
  if (residual && residual.buffer === out.buffer) {
    throw new TypeError("Matmul residual must not share a buffer with the output; pass beta = 1 to accumulate");
  }
  if (residual && residual.size !== M * ldc && residual.size !== M * ldc * count) {
    throw new TypeError(`Matmul residual [${residual.shape}] does not match C [${out.shape}]`);
  }
  const gpu = batch.gpu;
  const v = args.variant ?? pickMatmulVariant(gpu, { M, N, K, transA, transB, at: a.dtype, bt: b.dtype });
  const { splits, kChunk } = matmulSplit(gpu, v, { M, N, K, count });
  // GPU-only scratch, released once the reduction is recorded: later dispatches of the batch may reuse it.
  const part = splits > 1 ? empty(gpu, [count, splits, M, N], "f32", "matmul partial sums", true) : undefined;
  const params = {
    M,
    N,
    K,
    strideA: aBatch === 1 ? 0 : M * K,
    strideB: bBatch === 1 ? 0 : K * N,
    strideC: M * N,
    strideR: residual && residual.size !== M * N ? M * N : 0,
    alpha: args.alpha ?? 1,
    beta: args.beta ?? 0,
    hasBias: args.bias ? 1 : 0,
    hasResidual: residual ? 1 : 0,
    lda,
    colA,
    ldc,
    colC,
    splits,
    kChunk,
    count,
  };
  // Binding 6 exists only in the pipelines that split (matmul_slots.ts PART_BINDING).
  const buffers = part ? [a, b, out, args.bias, residual, part] : [a, b, out, args.bias, residual];
  batch.dispatch({
    kernel: matmulKernel(gpu, v, { transA, transB, at: a.dtype, bt: b.dtype }),
    buffers,
    params,
    grid: matmulGrid(gpu, v, { M, N, count, transB, splits }),
    label: `matmul ${v.name}`,
  });
  if (!part) return;
  batch.dispatch({
    kernel: reduceKernel(gpu, a.dtype, b.dtype),
    buffers,
    params,
    grid: foldGrid(gpu, Math.ceil((count * M * N) / 64)),
    label: `matmul ${v.name} reduce`,
  });
  part.release();
}

/**
 * The autotuner's prefix of matmul keys: the op and a hash of its shader, its block generators and its variant
 * list, so a change to any of them times the shapes again.
 */
export const MATMUL_TUNE_PREFIX: string = `matmul@${
  textHash(forwardSource + MATMUL_SLOTS_TEXT + MATMUL_VARIANTS.map((v) => v.name).join())
}`;

/**
 * The variant for a product of this size on this adapter: the autotuner's choice where it has one, else the seeded
 * default ({@linkcode seededMatmulVariant}); a miss is timed at the next sync point where the tuner tunes
 * (src/gpu/tuner.ts).
 *
 * @example
 * ```ts
 * const v = pickMatmulVariant(gpu, { M: 512, N: 4864, K: 896, transB: true }); // reg64x8 on lavapipe
 * ```
 */
export function pickMatmulVariant(gpu: Gpu, shape: MatmulShape): MatmulVariant {
  const tuner = tunerOf(gpu);
  if (!tuner.active) return seededMatmulVariant(gpu, shape); // nothing tuned, nothing to tune: no key to build
  const key = matmulKey(MATMUL_TUNE_PREFIX, shape);
  const tuned = tuner.choice(key);
  const known = tuned === undefined ? undefined : MATMUL_VARIANTS.find((v) => v.name === tuned);
  if (known) return known;
  if (shape.M > 0 && shape.N > 0 && shape.K > 0) tuner.request(key, () => matmulJob(gpu, shape));
  return seededMatmulVariant(gpu, shape);
}

/**
 * SYNC POINTS: times the candidates for a product now, keeps the fastest for its key (and saves it where the
 * tuner has a cache file), and returns the choice with every candidate's time. `deno task bench kernels --tune`.
 */
export function tuneMatmul(gpu: Gpu, shape: MatmulShape): Promise<TuneChoice> {
  return tunerOf(gpu).tune(matmulKey(MATMUL_TUNE_PREFIX, shape), matmulJob(gpu, shape));
}

/** Inputs of a product's shape (fixed values: timings do not depend on them) and how to time each candidate. */
function matmulJob(gpu: Gpu, shape: MatmulShape): TuneJob {
  const s = { transA: false, transB: false, at: "f32" as DType, bt: "f32" as DType, ...shape };
  const { M, N, K, transA, transB } = s;
  const filled = (rows: number, cols: number, dtype: DType) =>
    fromHost(gpu, Float32Array.from({ length: rows * cols }, (_, i) => ((i * 7919) % 1009) / 1009 - 0.5), [
      rows,
      cols,
    ], dtype);
  const a = filled(transA ? K : M, transA ? M : K, s.at);
  const b = filled(transB ? N : K, transB ? K : N, s.bt);
  const out = empty(gpu, [M, N], "f32", "matmul tuning output");
  return {
    candidates: matmulCandidates(gpu, s).map((v) => v.name),
    seed: seededMatmulVariant(gpu, s).name,
    measure: (name) =>
      timeRecorded(gpu, (batch) => matmul(batch, { a, b, out, transA, transB, variant: matmulVariant(name) })),
    done: () => [a, b, out].forEach((t) => t.release()),
  };
}

/** Records db = Σ_rows dY (+ beta · db) for dY [..., N]. */
export function biasGrad(batch: Batch, dy: Tensor, db: Tensor, beta = 0): void {
  const N = db.size;
  if (dy.size % N !== 0) throw new TypeError(`Bias gradient of [${dy.shape}] into [${db.shape}]: sizes do not divide`);
  batch.dispatch({
    kernel: kernel(batch.gpu, BACKWARD_SHADER, { params: BIAS_PARAMS }),
    buffers: [dy, db],
    params: { rows: dy.size / N, N, beta },
    grid: [Math.ceil(N / 64)],
  });
}
