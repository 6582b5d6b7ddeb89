/** Float64 reference of the matmul family and the bias gradient. */

/** Arguments mirror the GPU op; arrays are row-major, batch-major. */
export interface MatmulRef {
  a: ArrayLike<number>;
  b: ArrayLike<number>;
  M: number;
  N: number;
  K: number;
  batch?: number;
  transA?: boolean;
  transB?: boolean;
  /** Whether A / B carry a batch dimension (else broadcast). */
  batchedA?: boolean;
  batchedB?: boolean;
  bias?: ArrayLike<number>;
  residual?: ArrayLike<number>;
  alpha?: number;
  beta?: number;
  /** Previous C, used when beta != 0. */
  c?: ArrayLike<number>;
}

/** C [batch, M, N] = alpha·op(A)·op(B) + bias + R + beta·C. */
export function matmulRef(r: MatmulRef): Float64Array {
  const { M, N, K } = r;
  const batch = r.batch ?? 1;
  const out = new Float64Array(batch * M * N);
  for (let z = 0; z < batch; z++) {
    const ao = r.batchedA ? z * M * K : 0;
    const bo = r.batchedB ? z * K * N : 0;
    for (let m = 0; m < M; m++) {
      for (let n = 0; n < N; n++) {
        let s = 0;
        for (let k = 0; k < K; k++) {
          const av = r.transA ? r.a[ao + k * M + m] : r.a[ao + m * K + k];
          const bv = r.transB ? r.b[bo + n * K + k] : r.b[bo + k * N + n];
          s += av * bv;
        }
        const at = z * M * N + m * N + n;
        let v = (r.alpha ?? 1) * s;
        if (r.bias) v += r.bias[n];
        if (r.residual) v += r.residual.length === M * N ? r.residual[m * N + n] : r.residual[at];
        if (r.beta && r.c) v += r.beta * r.c[at];
        out[at] = v;
      }
    }
  }
  return out;
}

/** db [N] = Σ_rows dY [rows, N]. */
export function biasGradRef(dy: ArrayLike<number>, rows: number, N: number): Float64Array {
  const db = new Float64Array(N);
  for (let r = 0; r < rows; r++) for (let n = 0; n < N; n++) db[n] += dy[r * N + n];
  return db;
}
