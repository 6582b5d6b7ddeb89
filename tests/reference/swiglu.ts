/** Float64 reference of SwiGLU over a fused [T, 2I] gate/up row, and its backward. */

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/** h [T, I] = silu(g) · u. */
export function swigluRef(gu: ArrayLike<number>, I: number): Float64Array {
  const T = gu.length / (2 * I);
  const h = new Float64Array(T * I);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < I; i++) {
      const g = gu[t * 2 * I + i];
      h[t * I + i] = g * sigmoid(g) * gu[t * 2 * I + I + i];
    }
  }
  return h;
}

/** dgu [T, 2I] for upstream dh [T, I]. */
export function swigluBackwardRef(gu: ArrayLike<number>, dh: ArrayLike<number>, I: number): Float64Array {
  const T = gu.length / (2 * I);
  const dgu = new Float64Array(gu.length);
  for (let t = 0; t < T; t++) {
    for (let i = 0; i < I; i++) {
      const g = gu[t * 2 * I + i];
      const u = gu[t * 2 * I + I + i];
      const s = sigmoid(g);
      const d = dh[t * I + i];
      dgu[t * 2 * I + i] = d * u * s * (1 + g * (1 - s));
      dgu[t * 2 * I + I + i] = d * g * s;
    }
  }
  return dgu;
}
