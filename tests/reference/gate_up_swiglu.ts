/** Float64 reference of the fused gate/up/SwiGLU projection: h = silu(x · Wgᵀ) · (x · Wuᵀ). */
import { matmulRef } from "./matmul.ts";
import { swigluRef } from "./swiglu.ts";

/** h [M, N] from x [M, K] and the gate and up weights [N, K], row-major. */
export function gateUpSwigluRef(
  x: ArrayLike<number>,
  gate: ArrayLike<number>,
  up: ArrayLike<number>,
  dims: { M: number; N: number; K: number },
): Float64Array {
  const product = (w: ArrayLike<number>) => matmulRef({ a: x, b: w, ...dims, transB: true });
  return swigluRef(product(gate), product(up));
}
