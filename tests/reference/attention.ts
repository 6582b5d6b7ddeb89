/**
 * Float64 reference of grouped-query attention with per-query key ranges, forward and backward.
 *
 * Query t, head h attends to key rows kvStart[t] <= j < kvEnd[t] of kv head h / (H / KV). The score matrix is
 * materialised row by row here (the GPU kernels never do).
 */

/** Inputs shared by the forward and backward references. Layouts: q [T, H, D], k and v [S, KV, D]. */
export interface AttentionRef {
  q: ArrayLike<number>;
  k: ArrayLike<number>;
  v: ArrayLike<number>;
  kvStart: ArrayLike<number>;
  kvEnd: ArrayLike<number>;
  T: number;
  S: number;
  H: number;
  KV: number;
  D: number;
  /** Defaults to 1 / sqrt(D). */
  scale?: number;
}

/** Scaled scores s_j = scale · q_{t,h} · k_{j,kvh} for j in the row's range, and the index of its first key. */
function scores(r: AttentionRef, t: number, h: number): { j0: number; s: Float64Array } {
  const { H, KV, D } = r;
  const scale = r.scale ?? 1 / Math.sqrt(D);
  const kvh = Math.floor(h / (H / KV));
  const j0 = r.kvStart[t];
  const j1 = r.kvEnd[t];
  const s = new Float64Array(Math.max(0, j1 - j0));
  for (let j = j0; j < j1; j++) {
    let dotqk = 0;
    for (let d = 0; d < D; d++) dotqk += r.q[(t * H + h) * D + d] * r.k[(j * KV + kvh) * D + d];
    s[j - j0] = scale * dotqk;
  }
  return { j0, s };
}

/** Softmax probabilities of one row and their log-sum-exp (0 for an empty row). */
function softmax(s: Float64Array): { p: Float64Array; lse: number } {
  if (s.length === 0) return { p: s, lse: 0 };
  let m = -Infinity;
  for (const x of s) m = Math.max(m, x);
  let sum = 0;
  for (const x of s) sum += Math.exp(x - m);
  const lse = m + Math.log(sum);
  return { p: s.map((x) => Math.exp(x - lse)), lse };
}

/** o [T, H, D] = softmax(scale · q kᵀ) v over each row's range; lse [T, H]. Empty rows give o = 0, lse = 0. */
export function attentionForwardRef(r: AttentionRef): { o: Float64Array; lse: Float64Array } {
  const { T, H, KV, D } = r;
  const o = new Float64Array(T * H * D);
  const lse = new Float64Array(T * H);
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < H; h++) {
      const kvh = Math.floor(h / (H / KV));
      const { j0, s } = scores(r, t, h);
      const sm = softmax(s);
      lse[t * H + h] = sm.lse;
      for (let jj = 0; jj < s.length; jj++) {
        const j = j0 + jj;
        for (let d = 0; d < D; d++) o[(t * H + h) * D + d] += sm.p[jj] * r.v[(j * KV + kvh) * D + d];
      }
    }
  }
  return { o, lse };
}

/**
 * Gradients of Σ dO ⊙ o with respect to q, k and v:
 *   P = softmax(S), dP = dO vᵀ, dS = P ⊙ (dP − rowsum(dO ⊙ o)), dq = scale · dS k, dk = scale · dSᵀ q, dv = Pᵀ dO,
 * with dk and dv summed over the H / KV query heads that share a kv head.
 */
export function attentionBackwardRef(
  r: AttentionRef & { dO: ArrayLike<number> },
): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const { T, S, H, KV, D, dO } = r;
  const scale = r.scale ?? 1 / Math.sqrt(D);
  const { o } = attentionForwardRef(r);
  const dq = new Float64Array(T * H * D);
  const dk = new Float64Array(S * KV * D);
  const dv = new Float64Array(S * KV * D);
  for (let t = 0; t < T; t++) {
    for (let h = 0; h < H; h++) {
      const kvh = Math.floor(h / (H / KV));
      const row = (t * H + h) * D;
      const { j0, s } = scores(r, t, h);
      const { p } = softmax(s);
      let delta = 0;
      for (let d = 0; d < D; d++) delta += dO[row + d] * o[row + d];
      for (let jj = 0; jj < s.length; jj++) {
        const kv = ((j0 + jj) * KV + kvh) * D;
        let dp = 0;
        for (let d = 0; d < D; d++) dp += dO[row + d] * r.v[kv + d];
        const ds = p[jj] * (dp - delta);
        for (let d = 0; d < D; d++) {
          dv[kv + d] += p[jj] * dO[row + d];
          dq[row + d] += scale * ds * r.k[kv + d];
          dk[kv + d] += scale * ds * r.q[row + d];
        }
      }
    }
  }
  return { dq, dk, dv };
}
