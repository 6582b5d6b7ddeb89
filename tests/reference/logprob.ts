/** Float64 reference of the fused log-softmax statistics (target log-probability, entropy, lse) and backward. */

/** Per row n of logits [N, V] / temperature: lse, logp of target[n], entropy. */
export function logprobRef(logits: ArrayLike<number>, target: ArrayLike<number>, V: number, temperature = 1) {
  const N = logits.length / V;
  const lse = new Float64Array(N);
  const logp = new Float64Array(N);
  const entropy = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, logits[n * V + v] / temperature);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(logits[n * V + v] / temperature - m);
    lse[n] = m + Math.log(sum);
    let h = 0;
    for (let v = 0; v < V; v++) {
      const lq = logits[n * V + v] / temperature - lse[n];
      h -= Math.exp(lq) * lq;
    }
    entropy[n] = h;
    logp[n] = logits[n * V + target[n]] / temperature - lse[n];
  }
  return { lse, logp, entropy };
}

/** dlogits [N, V] of Σ_n dlogp[n]·logp[n] + dentropy[n]·entropy[n]. */
export function logprobBackwardRef(
  logits: ArrayLike<number>,
  target: ArrayLike<number>,
  dlogp: ArrayLike<number>,
  dentropy: ArrayLike<number>,
  V: number,
  temperature = 1,
): Float64Array {
  const { lse, entropy } = logprobRef(logits, target, V, temperature);
  const N = logits.length / V;
  const d = new Float64Array(logits.length);
  for (let n = 0; n < N; n++) {
    for (let v = 0; v < V; v++) {
      const lq = logits[n * V + v] / temperature - lse[n];
      const q = Math.exp(lq);
      let g = -dlogp[n] * q - dentropy[n] * q * (lq + entropy[n]);
      if (v === target[n]) g += dlogp[n];
      d[n * V + v] = g / temperature;
    }
  }
  return d;
}
