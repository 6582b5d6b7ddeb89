/** Float64 reference of the embedding lookup and its backward. */

/** out [T, C] = E[ids]. */
export function embeddingRef(ids: ArrayLike<number>, table: ArrayLike<number>, C: number): Float64Array {
  const out = new Float64Array(ids.length * C);
  for (let t = 0; t < ids.length; t++) for (let c = 0; c < C; c++) out[t * C + c] = table[ids[t] * C + c];
  return out;
}

/** dE [V, C] = prev + Σ_t onehot(ids[t]) ⊗ dOut[t]. */
export function embeddingBackwardRef(
  ids: ArrayLike<number>,
  dOut: ArrayLike<number>,
  prev: ArrayLike<number>,
  C: number,
): Float64Array {
  const dE = Float64Array.from(prev);
  for (let t = 0; t < ids.length; t++) for (let c = 0; c < C; c++) dE[ids[t] * C + c] += dOut[t * C + c];
  return dE;
}
