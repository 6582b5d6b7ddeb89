/** Float64 reference of the global gradient norm with clipping and of AdamW (PyTorch's formulation). */

/** norm, clip scale and finite flag of a list of gradients. */
export function gradNormRef(grads: ArrayLike<number>[], maxNorm: number) {
  let ss = 0;
  for (const g of grads) for (let i = 0; i < g.length; i++) ss += g[i] * g[i];
  const norm = Math.sqrt(ss);
  const finite = Number.isFinite(norm);
  const scale = maxNorm > 0 && finite ? Math.min(1, maxNorm / (norm + 1e-6)) : 1;
  return { norm, scale, finite };
}

/** One AdamW step on copies of w, m, v; returns the new arrays. */
export function adamwRef(
  w: ArrayLike<number>,
  g: ArrayLike<number>,
  m: ArrayLike<number>,
  v: ArrayLike<number>,
  o: { lr: number; beta1: number; beta2: number; eps: number; weightDecay: number; step: number; scale: number },
) {
  const n = w.length;
  const w2 = new Float64Array(n), m2 = new Float64Array(n), v2 = new Float64Array(n);
  const bc1 = 1 - o.beta1 ** o.step;
  const bc2 = 1 - o.beta2 ** o.step;
  for (let i = 0; i < n; i++) {
    const grad = g[i] * o.scale;
    m2[i] = o.beta1 * m[i] + (1 - o.beta1) * grad;
    v2[i] = o.beta2 * v[i] + (1 - o.beta2) * grad * grad;
    w2[i] = w[i] * (1 - o.lr * o.weightDecay) - o.lr * (m2[i] / bc1) / (Math.sqrt(v2[i] / bc2) + o.eps);
  }
  return { w: w2, m: m2, v: v2 };
}
