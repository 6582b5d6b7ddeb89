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
 * The register blocks of each kernel are written out here as straight-line WGSL (see the shader's header for why);
 * everything else lives in shaders/matmul_forward.wgsl. Pipelines are cached per device under a short key, so the
 * generated code is built once per variant, transposition and dtype pair.
 */
import forwardSource from "../../shaders/matmul_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/matmul_backward.wgsl" with { type: "text" };
import type { Batch, Grid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { cachedKernel, type Kernel, kernel, type Shader } from "../gpu/pipeline.ts";
import type { DType, Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import { type MatmulVariant, pickMatmulVariant } from "./matmul_variants.ts";
import { fixedSubgroupSize, laneSlots, slotLines } from "./wgsl.ts";

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

/** Template values of the entries a kernel does not use: the smallest valid shapes and empty slots. */
const IDLE: Record<string, string | number> = {
  RM: 1,
  CN: 4,
  ...laneSlots(1, false),
  REG_INIT: "",
  REG_STEP: "",
  REG_SAVE: "",
  TM: 4,
  TN: 4,
  WX: 1,
  WY: 1,
  BK: 4,
  TILE_INIT: "",
  TILE_STEP: "",
  TILE_SAVE: "",
  GM: 1,
  GX: 1,
  GY: 1,
  GEMV_INIT: "",
  GEMV_STEP: "",
  GEMV_SAVE: "",
};

/** main_reg: RM x CN accumulators per invocation; A rows loaded once per subgroup and broadcast when `share`. */
function regSlots(rm: number, cn: number, lanes: number, share: boolean): Record<string, string | number> {
  const init: string[] = [];
  const step: string[] = [];
  const save: string[] = [];
  if (share) {
    for (let q = 0; q < Math.ceil(rm / lanes); q++) {
      init.push(`let a${q} = baseA + offA(min(row0 + ${q * lanes}u + lane, lastM), 0u);`);
      step.push(`let x${q} = f32(A[a${q} + ka]);`);
    }
  } else {
    for (let i = 0; i < rm; i++) init.push(`let a${i} = baseA + offA(min(row0 + ${i}u, lastM), 0u);`);
  }
  for (let j = 0; j < cn; j++) {
    init.push(`let b${j} = baseB + offB(0u, min(col0 + ${j * lanes}u + lane, lastN));`);
    step.push(`let y${j} = f32(B[b${j} + kb]);`);
  }
  for (let i = 0; i < rm; i++) {
    step.push(
      share
        ? `let r${i} = subgroupBroadcast(x${Math.floor(i / lanes)}, ${i % lanes}u);`
        : `let r${i} = f32(A[a${i} + ka]);`,
    );
    for (let j = 0; j < cn; j++) {
      init.push(`var c${i}_${j} = 0.0;`);
      step.push(`c${i}_${j} = fma(r${i}, y${j}, c${i}_${j});`);
    }
    for (let j = 0; j < cn; j += 4) {
      const quad = [0, 1, 2, 3].map((d) => `c${i}_${j + d}`).join(", ");
      save.push(`stage[${(i * cn + j) / 4}u * LANES + lane] = vec4<f32>(${quad});`);
    }
  }
  return {
    RM: rm,
    CN: cn,
    ...laneSlots(lanes, share),
    REG_INIT: slotLines(init, 2),
    REG_STEP: slotLines(step, 4),
    REG_SAVE: slotLines(save, 2),
  };
}

/** main_tile: TM x TN outputs per invocation as vec4 accumulators c{row}_{quad}, fed from vec4 tile reads. */
function tileSlots(v: MatmulVariant): Record<string, string | number> {
  const init: string[] = [];
  const step: string[] = [];
  const save: string[] = [];
  const quads = v.tn / 4;
  for (let p = 0; p < v.tm / 4; p++) step.push(`let a${p} = tileA[ra + ${p * v.wy}u];`);
  for (let q = 0; q < quads; q++) step.push(`let b${q} = tileB[rb + ${q * v.wx}u];`);
  for (let i = 0; i < v.tm; i++) {
    for (let q = 0; q < quads; q++) {
      init.push(`var c${i}_${q} = vec4<f32>();`);
      step.push(`c${i}_${q} = fma(vec4<f32>(a${i >> 2}[${i & 3}]), b${q}, c${i}_${q});`);
      save.push(`acc[${i * quads + q}] = c${i}_${q};`);
    }
  }
  return {
    TM: v.tm,
    TN: v.tn,
    WX: v.wx,
    WY: v.wy,
    BK: v.bk,
    TILE_INIT: slotLines(init, 2),
    TILE_STEP: slotLines(step, 6),
    TILE_SAVE: slotLines(save, 2),
  };
}

/** main_gemv: GM rows per workgroup, one partial dot product per row and invocation. */
function gemvSlots(v: MatmulVariant): Record<string, string | number> {
  const init: string[] = [];
  const step: string[] = [];
  const save: string[] = [];
  for (let g = 0; g < v.tm; g++) {
    init.push(`let a${g} = baseA + offA(min(row0 + ${g}u, lastM), 0u);`, `var c${g} = 0.0;`);
    step.push(`c${g} = fma(f32(A[a${g} + ka]), b, c${g});`);
    save.push(`partial[${g}u * GX * GY + li] = c${g};`);
  }
  return {
    GM: v.tm,
    GX: v.wx,
    GY: v.wy,
    GEMV_INIT: slotLines(init, 2),
    GEMV_STEP: slotLines(step, 4),
    GEMV_SAVE: slotLines(save, 2),
  };
}

const ENTRY = { reg: "main_reg", tile: "main_tile", gemv: "main_gemv" } as const;

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
    const slots = v.kind === "reg"
      ? regSlots(v.tm, v.tn, lanes, share)
      : v.kind === "tile"
      ? tileSlots(v)
      : gemvSlots(v);
    return kernel(gpu, FORWARD_SHADER, {
      params: PARAMS,
      entryPoint: ENTRY[v.kind],
      template: { ...IDLE, ...slots, ENABLE: at === "f16" || bt === "f16" ? "enable f16;" : "", AT: at, BT: bt },
      constants: { TRANS_A: transA, TRANS_B: transB },
      label,
    });
  });
}

/** Workgroup grid of a variant for C [count, M, N]. */
export function matmulGrid(
  gpu: Gpu,
  v: MatmulVariant,
  shape: { M: number; N: number; count: number; transB: boolean },
): Grid {
  const { M, N, count } = shape;
  if (v.kind === "reg") return [Math.ceil(N / (matmulRegLanes(gpu, v).lanes * v.tn)), Math.ceil(M / v.tm), count];
  if (v.kind === "tile") return [Math.ceil(N / (v.wx * v.tn)), Math.ceil(M / (v.wy * v.tm)), count];
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
  const v = args.variant ?? pickMatmulVariant(batch.gpu, { M, N, K });
  batch.dispatch({
    kernel: matmulKernel(batch.gpu, v, { transA, transB, at: a.dtype, bt: b.dtype }),
    buffers: [a, b, out, args.bias, residual],
    params: {
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
    },
    grid: matmulGrid(batch.gpu, v, { M, N, count, transB }),
    label: `matmul ${v.name}`,
  });
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
