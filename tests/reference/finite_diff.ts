/** Central finite differences, to check every backward reference. */

/** Gradient of a scalar function at x by central differences with step h·max(1, |x_i|). */
export function numericGrad(f: (x: Float64Array) => number, x: Float64Array, h = 1e-5): Float64Array {
  const g = new Float64Array(x.length);
  const probe = Float64Array.from(x);
  for (let i = 0; i < x.length; i++) {
    const step = h * Math.max(1, Math.abs(x[i]));
    probe[i] = x[i] + step;
    const up = f(probe);
    probe[i] = x[i] - step;
    const down = f(probe);
    probe[i] = x[i];
    g[i] = (up - down) / (2 * step);
  }
  return g;
}

/** Σ w_i · y_i: turns a vector function into the scalar whose gradient a backward with upstream w computes. */
export function dot(w: ArrayLike<number>, y: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < w.length; i++) s += w[i] * y[i];
  return s;
}
