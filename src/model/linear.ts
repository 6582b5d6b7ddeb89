/**
 * Linear layers y = x · Wᵀ (+ b) (+ residual) with W [N, K] as Hugging Face stores it, and their backward,
 * as the transformer uses them. Weight and bias gradients always accumulate (+=), so micro-batches add up and
 * the trainer clears gradients once per optimizer step.
 *
 * With a LoRA adapter (PEFT's convention) the layer adds s · (x · Aᵀ) · Bᵀ, A [r, K], B [N, r], s = alpha / r:
 *   forward  t = x · Aᵀ [T, r]             y += s · t · Bᵀ
 *   backward dt = s · dy · B [T, r]        dB += s · dyᵀ · t      dA += dtᵀ · x      dx += dt · A
 * t is recomputed in the backward (r columns: far cheaper than keeping it).
 *
 * A weight split by rows (src/gpu/split.ts: past the GPU's tensor limit) is read part by part: part [n0, n1)
 * writes the columns [n0, n1) of y, takes those columns of dy for dx (the parts' products summed) and for its own
 * rows of dW. A weight that fits is one matmul per product, as it always was.
 */
import type { Batch } from "../gpu/batch.ts";
import { rowParts, SplitTensor, type StoredTensor } from "../gpu/split.ts";
import { empty, type Tensor } from "../gpu/tensor.ts";
import { biasGrad, matmul } from "../ops/matmul.ts";

/** A GPU-only activation tensor (may reuse buffers released earlier in the same batch). */
export function act(batch: Batch, shape: readonly number[], label?: string): Tensor {
  return empty(batch.gpu, shape, "f32", label, true);
}

/** One projection's LoRA adapter: A [r, K], B [N, r] (f32) and the scale s. */
export interface LoraPair {
  a: Tensor;
  b: Tensor;
  scale: number;
}

/** The column block of a [T, N] activation that one row part of a weight owns; none for a whole weight. */
function block(w: StoredTensor, start: number, rows: number): readonly [number, number] | undefined {
  return w instanceof SplitTensor ? [start, rows] : undefined;
}

/** Records y [T, N] = x [T, K] · W [N, K]ᵀ (+ bias [N]) (+ residual [T, N]) (+ the LoRA term). */
export function linear(
  batch: Batch,
  x: Tensor,
  w: StoredTensor,
  y: Tensor,
  extra: { bias?: Tensor; residual?: Tensor; lora?: LoraPair } = {},
): void {
  for (const p of rowParts(w)) {
    const outCols = block(w, p.start, p.rows);
    matmul(batch, { a: x, b: p.tensor, out: y, transB: true, bias: extra.bias, residual: extra.residual, outCols });
  }
  const lora = extra.lora;
  if (!lora) return;
  const t = act(batch, [x.shape[0], lora.a.shape[0]], "lora t");
  matmul(batch, { a: x, b: lora.a, out: t, transB: true });
  matmul(batch, { a: t, b: lora.b, out: y, transB: true, alpha: lora.scale, beta: 1 });
  t.release();
}

/** What one linear layer's backward computes. */
export interface LinearGrad {
  /** Upstream gradient [T, N]. */
  dy: Tensor;
  /** Forward input [T, K]. */
  x: Tensor;
  w: StoredTensor;
  /** Input gradient [T, K]: written, or accumulated when `accumulate` (several layers read the same input). */
  dx?: Tensor;
  accumulate?: boolean;
  /** Weight gradient [N, K], accumulated; absent for a frozen weight. */
  dw?: StoredTensor;
  /** Bias gradient [N], accumulated. */
  db?: Tensor;
  /** The layer's LoRA adapter and, when it trains, the gradients of A and B (accumulated). */
  lora?: LoraPair & { dA?: Tensor; dB?: Tensor };
}

/** Records dx = dy · W, dW += dyᵀ · x and db += Σ_rows dy (and the LoRA terms). */
export function linearBackward(batch: Batch, g: LinearGrad): void {
  const dx = g.dx, dw = g.dw;
  if (dx) {
    rowParts(g.w).forEach((p, i) => {
      const beta = g.accumulate || i > 0 ? 1 : 0;
      matmul(batch, { a: g.dy, b: p.tensor, out: dx, beta, aCols: block(g.w, p.start, p.rows) });
    });
  }
  if (dw) {
    for (const p of rowParts(dw)) {
      matmul(batch, { a: g.dy, b: g.x, out: p.tensor, transA: true, beta: 1, aCols: block(dw, p.start, p.rows) });
    }
  }
  if (g.db) biasGrad(batch, g.dy, g.db, 1);
  const lora = g.lora;
  if (!lora) return;
  const T = g.x.shape[0], r = lora.a.shape[0];
  const t = act(batch, [T, r], "lora t"), dt = act(batch, [T, r], "lora dt");
  matmul(batch, { a: g.x, b: lora.a, out: t, transB: true });
  matmul(batch, { a: g.dy, b: lora.b, out: dt, alpha: lora.scale });
  if (lora.dB) matmul(batch, { a: g.dy, b: t, out: lora.dB, transA: true, alpha: lora.scale, beta: 1 });
  if (lora.dA) matmul(batch, { a: dt, b: g.x, out: lora.dA, transA: true, beta: 1 });
  if (g.dx) matmul(batch, { a: dt, b: lora.a, out: g.dx, beta: 1 });
  t.release();
  dt.release();
}
