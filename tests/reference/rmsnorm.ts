/** Float64 reference of RMSNorm (Qwen2 form: y = r / sqrt(mean(r²) + eps) · w) and its backward. */

/** y [T, C] and rstd [T] of rows r [T, C]. */
export function rmsnormRef(r: ArrayLike<number>, w: ArrayLike<number>, eps: number) {
  const C = w.length;
  const T = r.length / C;
  const y = new Float64Array(r.length);
  const rstd = new Float64Array(T);
  for (let t = 0; t < T; t++) {
    let ss = 0;
    for (let c = 0; c < C; c++) ss += r[t * C + c] ** 2;
    rstd[t] = 1 / Math.sqrt(ss / C + eps);
    for (let c = 0; c < C; c++) y[t * C + c] = r[t * C + c] * rstd[t] * w[c];
  }
  return { y, rstd };
}

/** dr [T, C] and dw [C] for upstream dy, by the closed form (checked against finite differences). */
export function rmsnormBackwardRef(r: ArrayLike<number>, w: ArrayLike<number>, dy: ArrayLike<number>, eps: number) {
  const C = w.length;
  const T = r.length / C;
  const { rstd } = rmsnormRef(r, w, eps);
  const dr = new Float64Array(r.length);
  const dw = new Float64Array(C);
  for (let t = 0; t < T; t++) {
    const s = rstd[t];
    let mean = 0;
    for (let c = 0; c < C; c++) mean += r[t * C + c] * s * w[c] * dy[t * C + c];
    mean /= C;
    for (let c = 0; c < C; c++) {
      const i = t * C + c;
      dr[i] = s * (w[c] * dy[i] - r[i] * s * mean);
      dw[c] += dy[i] * r[i] * s;
    }
  }
  return { dr, dw };
}
