/** Float64 reference of SwiGLU, h = silu(g) · u elementwise, and its backward. */

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** h = silu(g) · u. */
export function swigluRef(g: ArrayLike<number>, u: ArrayLike<number>): Float64Array {
  return Float64Array.from({ length: g.length }, (_, i) => g[i] * sigmoid(g[i]) * u[i]);
}

/** dg and du for upstream dh. */
export function swigluBackwardRef(g: ArrayLike<number>, u: ArrayLike<number>, dh: ArrayLike<number>) {
  const dg = new Float64Array(g.length);
  const du = new Float64Array(g.length);
  for (let i = 0; i < g.length; i++) {
    const s = sigmoid(g[i]);
    dg[i] = dh[i] * u[i] * s * (1 + g[i] * (1 - s));
    du[i] = dh[i] * g[i] * s;
  }
  return { dg, du };
}
