/**
 * Float64 reference of the token sampler (shaders/sample.wgsl): plain sorting, Hugging Face's order.
 *
 * Per row: greedy (temperature 0) is the argmax, first index on ties. Otherwise s = z / T; top-k keeps every token
 * with s >= the k-th largest s (ties kept); top-p sorts the top-k tokens by probability, renormalised, and keeps
 * all tokens whose probability is >= that of the token where the cumulative mass first reaches topP (ties kept);
 * the draw is the first index, in index order, whose cumulative kept mass exceeds u * keptMass.
 */

/** Settings as the GPU op takes them. */
export interface SampleRefSettings {
  temperature?: number;
  topK?: number;
  topP?: number;
}

/** One row's result, with how far its decisions were from flipping. */
export interface SampleRefRow {
  id: number;
  /** log p(id) under softmax(z / T) over the full vocabulary (T = 1 when greedy). */
  logprob: number;
  /**
   * Distance of the closest decision to its boundary, as a fraction of the mass it was taken on: for the draw,
   * |u·M − nearest cumulative boundary| / M over the kept tokens; for top-p, |topP·Mk − nearest group boundary|
   * / Mk over the top-k tokens. Infinity when greedy. A computation in f32 may pick another token only when this
   * is within its rounding error.
   */
  margin: number;
  /** Whether each token was kept by top-k and top-p. */
  kept: boolean[];
}

/** Tokens sorted by logit, largest first (ties by index). */
function byLogit(z: ArrayLike<number>, keep: (i: number) => boolean): number[] {
  const order: number[] = [];
  for (let i = 0; i < z.length; i++) if (keep(i)) order.push(i);
  return order.sort((a, b) => z[b] - z[a] || a - b);
}

/** log softmax(z / T)[id] over the full row, in float64. */
export function logprobRef(z: ArrayLike<number>, id: number, temperature = 1): number {
  const T = temperature === 0 ? 1 : temperature;
  let max = -Infinity;
  for (let i = 0; i < z.length; i++) max = Math.max(max, z[i] / T);
  let sum = 0;
  for (let i = 0; i < z.length; i++) sum += Math.exp(z[i] / T - max);
  return z[id] / T - max - Math.log(sum);
}

/** The kept tokens of a row and their unnormalised probabilities exp(s - max s), plus the top-p margin. */
export function keptRef(z: ArrayLike<number>, settings: SampleRefSettings): {
  kept: boolean[];
  weights: Float64Array;
  margin: number;
} {
  const V = z.length;
  const T = settings.temperature ?? 1;
  const topK = settings.topK ?? 0;
  const topP = settings.topP ?? 1;
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, z[i] / T);
  const weights = new Float64Array(V);
  for (let i = 0; i < V; i++) weights[i] = Math.exp(z[i] / T - max);
  const kept = new Array<boolean>(V).fill(true);
  if (topK > 0 && topK < V) {
    const kth = z[byLogit(z, () => true)[topK - 1]];
    for (let i = 0; i < V; i++) kept[i] = z[i] >= kth;
  }
  let margin = Infinity;
  if (topP < 1) {
    const order = byLogit(z, (i) => kept[i]);
    let massK = 0;
    for (const i of order) massK += weights[i];
    const goal = topP * massK;
    // Walk groups of equal logits from the top; the first group whose inclusive mass reaches the goal sets the
    // threshold, so all its ties are kept.
    let before = 0;
    let threshold = z[order[order.length - 1]];
    for (let j = 0; j < order.length;) {
      const value = z[order[j]];
      let group = 0;
      while (j < order.length && z[order[j]] === value) group += weights[order[j++]];
      if (before + group >= goal) {
        threshold = value;
        margin = Math.min(before + group - goal, goal - before) / massK;
        break;
      }
      before += group;
    }
    for (let i = 0; i < V; i++) kept[i] = kept[i] && z[i] >= threshold;
  }
  return { kept, weights, margin };
}

/** Samples one row of logits with the uniform number u in [0, 1). */
export function sampleRowRef(z: ArrayLike<number>, u: number, settings: SampleRefSettings = {}): SampleRefRow {
  const V = z.length;
  const T = settings.temperature ?? 1;
  if (T === 0) {
    let id = 0;
    for (let i = 1; i < V; i++) if (z[i] > z[id]) id = i;
    return { id, logprob: logprobRef(z, id, 1), margin: Infinity, kept: Array.from({ length: V }, (_, i) => i === id) };
  }
  const { kept, weights, margin: topPMargin } = keptRef(z, settings);
  let mass = 0;
  for (let i = 0; i < V; i++) if (kept[i]) mass += weights[i];
  const goal = u * mass;
  let cum = 0;
  let id = -1;
  let margin = topPMargin;
  for (let i = 0; i < V; i++) {
    if (!kept[i] || weights[i] === 0) continue;
    const prev = cum;
    cum += weights[i];
    if (cum > goal) {
      id = i;
      margin = Math.min(margin, (goal - prev) / mass, (cum - goal) / mass);
      break;
    }
  }
  if (id < 0) throw new Error(`Reference draw found no token (u = ${u}, kept mass ${mass})`);
  return { id, logprob: logprobRef(z, id, T), margin, kept };
}

/** Samples N rows of [N, V] logits with uniforms [N]. */
export function sampleRef(
  logits: ArrayLike<number>,
  N: number,
  V: number,
  uniform: ArrayLike<number>,
  settings: SampleRefSettings = {},
): SampleRefRow[] {
  const rows: SampleRefRow[] = [];
  for (let r = 0; r < N; r++) {
    const z = Array.prototype.slice.call(logits, r * V, (r + 1) * V) as number[];
    rows.push(sampleRowRef(z, uniform[r], settings));
  }
  return rows;
}
