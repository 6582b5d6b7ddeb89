/**
 * Matmul: C = alpha · op(A) · op(B) + bias + R + beta · C, batched, in every transposition a linear layer's
 * forward and backward need, with f32 or f16 inputs and f32 accumulation. Plus the bias gradient.
 *
 * A linear layer y = x · Wᵀ + b with x [T, K], W [N, K]:
 *   forward  y  = matmul(x, W, transB)               [T, N]
 *   backward dx = matmul(dy, W)                      [T, K]
 *            dW = matmul(dy, x, transA)              [N, K]   (dy stored [T, N] = [K', M'])
 *            db = biasGrad(dy)                       [N]
 */
import { type Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { type Kernel, kernel } from "../gpu/pipeline.ts";
import { type DType, placeholder, type Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import { type MatmulVariant, pickMatmulVariant } from "./matmul_variants.ts";

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
  ] as const,
);

const BIAS_PARAMS = uniforms([["rows", "u32"], ["N", "u32"], ["beta", "f32"]] as const);

/** Arguments of {@linkcode matmul}. Shapes: A [..., M, K] ([..., K, M] if transA), B [..., K, N] ([..., N, K] if transB). */
export interface MatmulArgs {
  a: Tensor;
  b: Tensor;
  /** Output [..., M, N], f32. Leading dimensions are the batch; A, B or R without them are broadcast. */
  out: Tensor;
  transA?: boolean;
  transB?: boolean;
  /** [N] f32, added to every row. */
  bias?: Tensor;
  /** [..., M, N] f32, added to the product (a residual connection). */
  residual?: Tensor;
  alpha?: number;
  /** 0 overwrites `out`; 1 accumulates into it (gradient accumulation). */
  beta?: number;
  /** Overrides the adapter's tuned choice (tests and benchmarks). */
  variant?: MatmulVariant;
}

/** The kernel for one variant, transposition and input dtype pair. */
export function matmulKernel(
  gpu: Gpu,
  v: MatmulVariant,
  transA: boolean,
  transB: boolean,
  at: DType,
  bt: DType,
): Kernel {
  for (const t of [at, bt]) {
    if (t !== "f32" && t !== "f16") throw new TypeError(`Matmul inputs must be f32 or f16, got ${t}`);
  }
  const f16 = at === "f16" || bt === "f16";
  return kernel(gpu, "matmul_forward", {
    params: PARAMS,
    entryPoint: v.kind === "reg" ? "main_reg" : "main_tile",
    template: {
      ENABLE: f16 ? "enable f16;" : "",
      AT: at,
      BT: bt,
      TM: v.tm,
      TN: v.tn,
      WX: v.wx,
      WY: v.wy,
      BK: v.bk,
    },
    constants: { TRANS_A: transA, TRANS_B: transB },
  });
}

function lastTwo(t: Tensor, what: string): [number, number, number] {
  if (t.shape.length < 2) throw new TypeError(`Matmul ${what} must have at least 2 dimensions, got [${t.shape}]`);
  const r = t.shape[t.shape.length - 2];
  const c = t.shape[t.shape.length - 1];
  return [r, c, t.size / (r * c)];
}

/** Records C = alpha · op(A) · op(B) (+ bias) (+ residual) (+ beta · C). */
export function matmul(batch: Batch, args: MatmulArgs): void {
  const { a, b, out } = args;
  const transA = args.transA ?? false;
  const transB = args.transB ?? false;
  const [ar, ac, aBatch] = lastTwo(a, "A");
  const [br, bc, bBatch] = lastTwo(b, "B");
  const [M, K] = transA ? [ac, ar] : [ar, ac];
  const [K2, N] = transB ? [bc, br] : [br, bc];
  const [cr, cc, count] = lastTwo(out, "C");
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
  if (args.bias && (args.bias.size !== N || args.bias.dtype !== "f32")) {
    throw new TypeError(`Matmul bias must be [${N}] f32, got [${args.bias.shape}] ${args.bias.dtype}`);
  }
  const residual = args.residual;
  if (residual && residual.buffer === out.buffer) {
    throw new TypeError("Matmul residual must not share a buffer with the output; pass beta = 1 to accumulate");
  }
  if (residual && residual.size !== M * N && residual.size !== M * N * count) {
    throw new TypeError(`Matmul residual [${residual.shape}] does not match C [${out.shape}]`);
  }
  const v = args.variant ?? pickMatmulVariant(batch.gpu, M, N, K);
  batch.dispatch({
    kernel: matmulKernel(batch.gpu, v, transA, transB, a.dtype, b.dtype),
    buffers: [a, b, out, args.bias ?? placeholder(batch.gpu), residual ?? placeholder(batch.gpu)],
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
    },
    grid: [Math.ceil(N / (v.wx * v.tn)), Math.ceil(M / (v.wy * v.tm)), count],
    label: `matmul ${v.name}`,
  });
}

/** Records db = Σ_rows dY (+ beta · db) for dY [..., N]. */
export function biasGrad(batch: Batch, dy: Tensor, db: Tensor, beta = 0): void {
  const N = db.size;
  if (dy.size % N !== 0) throw new TypeError(`Bias gradient of [${dy.shape}] into [${db.shape}]: sizes do not divide`);
  batch.dispatch({
    kernel: kernel(batch.gpu, "matmul_backward", { params: BIAS_PARAMS }),
    buffers: [dy, db],
    params: { rows: dy.size / N, N, beta },
    grid: [Math.ceil(N / 64)],
  });
}
