/** Float64 reference of rotary embeddings as Hugging Face's Qwen2 writes them: x·cos + rotate_half(x)·sin. */

/** Rotates heads [0, heads) of x [T, stride, D] by pos[t]·θ^(-2i/D); `sign` -1 rotates back (the backward). */
export function ropeRef(
  x: ArrayLike<number>,
  pos: ArrayLike<number>,
  o: { heads: number; stride: number; D: number; theta: number; sign?: number },
): Float64Array {
  const { heads, stride, D, theta } = o;
  const sign = o.sign ?? 1;
  const half = D / 2;
  const out = Float64Array.from(x);
  for (let t = 0; t < pos.length; t++) {
    for (let h = 0; h < heads; h++) {
      const base = (t * stride + h) * D;
      // rotate_half(x) = [-x2, x1]; cos and sin repeat over both halves.
      for (let d = 0; d < D; d++) {
        const i = d % half;
        const angle = pos[t] * Math.pow(theta, (-2 * i) / D);
        const rotated = d < half ? -x[base + d + half] : x[base + d - half];
        out[base + d] = x[base + d] * Math.cos(angle) + sign * rotated * Math.sin(angle);
      }
    }
  }
  return out;
}
