/**
 * Linear layers y = x · Wᵀ (+ b) (+ residual) with W [N, K] as Hugging Face stores it, and their backward,
 * as the transformer uses them. Weight and bias gradients always accumulate (+=), so micro-batches add up and
 * the trainer clears gradients once per optimizer step.
 */
import type { Batch } from "../gpu/batch.ts";
import { empty, type Tensor } from "../gpu/tensor.ts";
import { biasGrad, matmul } from "../ops/matmul.ts";

/** A GPU-only activation tensor (may reuse buffers released earlier in the same batch). */
export function act(batch: Batch, shape: readonly number[], label?: string): Tensor {
  return empty(batch.gpu, shape, "f32", label, true);
}

/** Records y [T, N] = x [T, K] · W [N, K]ᵀ (+ bias [N]) (+ residual [T, N]). */
export function linear(
  batch: Batch,
  x: Tensor,
  w: Tensor,
  y: Tensor,
  extra: { bias?: Tensor; residual?: Tensor } = {},
): void {
  matmul(batch, { a: x, b: w, out: y, transB: true, bias: extra.bias, residual: extra.residual });
}

/** What one linear layer's backward computes. */
export interface LinearGrad {
  /** Upstream gradient [T, N]. */
  dy: Tensor;
  /** Forward input [T, K]. */
  x: Tensor;
  w: Tensor;
  /** Input gradient [T, K]: written, or accumulated when `accumulate` (several layers read the same input). */
  dx?: Tensor;
  accumulate?: boolean;
  /** Weight gradient [N, K], accumulated. */
  dw: Tensor;
  /** Bias gradient [N], accumulated. */
  db?: Tensor;
}

/** Records dx = dy · W, dW += dyᵀ · x and db += Σ_rows dy. */
export function linearBackward(batch: Batch, g: LinearGrad): void {
  if (g.dx) matmul(batch, { a: g.dy, b: g.w, out: g.dx, beta: g.accumulate ? 1 : 0 });
  matmul(batch, { a: g.dy, b: g.x, out: g.dw, transA: true, beta: 1 });
  if (g.db) biasGrad(batch, g.dy, g.db, 1);
}
