/**
 * Host helpers for attention ranges: which key rows each query sees (kvStart, kvEnd) and which query rows may see
 * each key (qStart, qEnd), for packed training batches and for KV-cache slots. Plain arrays, no GPU.
 */

/** Key ranges of each query row and query ranges of each key row, as uploaded to u32 tensors. */
export interface AttentionRanges {
  /** [T] first key row of each query. */
  kvStart: Uint32Array;
  /** [T] one past the last key row of each query (== kvStart for padding). */
  kvEnd: Uint32Array;
  /** [S] first query row that attends to each key row. */
  qStart: Uint32Array;
  /** [S] one past the last query row that attends to each key row (== qStart for padding). */
  qEnd: Uint32Array;
}

/**
 * Ranges of a packed training batch (S = T): sequences of the given lengths laid end to end, each causal within
 * itself; rows past the sum, up to `padTo`, are padding that attends to nothing and is attended by nothing.
 *
 * @example
 * ```ts
 * const r = packedCausalRanges([3, 2]);
 * // r.kvStart = [0, 0, 0, 3, 3], r.kvEnd = [1, 2, 3, 4, 5]
 * // r.qStart  = [0, 1, 2, 3, 4], r.qEnd  = [3, 3, 3, 5, 5]
 * ```
 */
export function packedCausalRanges(lengths: readonly number[], options: { padTo?: number } = {}): AttentionRanges {
  for (const n of lengths) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`Sequence lengths must be integers >= 0, got ${n}`);
  }
  const used = lengths.reduce((a, b) => a + b, 0);
  const T = options.padTo ?? used;
  if (T < used) throw new RangeError(`Cannot pad ${used} packed tokens to ${T}`);
  const r: AttentionRanges = {
    kvStart: new Uint32Array(T),
    kvEnd: new Uint32Array(T),
    qStart: new Uint32Array(T),
    qEnd: new Uint32Array(T),
  };
  let start = 0;
  for (const n of lengths) {
    for (let t = start; t < start + n; t++) {
      r.kvStart[t] = start;
      r.kvEnd[t] = t + 1;
      r.qStart[t] = t;
      r.qEnd[t] = start + n;
    }
    start += n;
  }
  for (let t = used; t < T; t++) {
    r.kvStart[t] = r.kvEnd[t] = t;
    r.qStart[t] = r.qEnd[t] = t;
  }
  return r;
}

/**
 * Key ranges of queries into a KV cache where slot s owns rows [s · maxLen, (s + 1) · maxLen): query t, of slot
 * slots[t] at position positions[t], sees its slot's rows up to and including its own position.
 *
 * @example
 * ```ts
 * const { kvStart, kvEnd } = cacheRanges([0, 2], [4, 0], 16); // kvStart = [0, 32], kvEnd = [5, 33]
 * ```
 */
export function cacheRanges(
  slots: ArrayLike<number>,
  positions: ArrayLike<number>,
  maxLen: number,
): { kvStart: Uint32Array; kvEnd: Uint32Array } {
  if (slots.length !== positions.length) {
    throw new TypeError(`Cache ranges need one position per slot entry, got ${slots.length} and ${positions.length}`);
  }
  const kvStart = new Uint32Array(slots.length);
  const kvEnd = new Uint32Array(slots.length);
  for (let t = 0; t < slots.length; t++) {
    if (positions[t] < 0 || positions[t] >= maxLen) {
      throw new RangeError(`Cache position ${positions[t]} is outside 0..${maxLen - 1}`);
    }
    kvStart[t] = slots[t] * maxLen;
    kvEnd[t] = slots[t] * maxLen + positions[t] + 1;
  }
  return { kvStart, kvEnd };
}

/** What the host knows of a forward's key ranges, for the choice of kernel (see pickAttentionForward). */
export interface RangeFacts {
  /** The longest range kvEnd - kvStart of any query (at least 1). */
  longest: number;
  /** How many distinct first keys the queries have: the sequences (or cache slots) they belong to. */
  starts: number;
}

/**
 * The longest range and the number of distinct range starts of the given queries.
 *
 * @example
 * ```ts
 * rangeFacts([0, 0, 0, 3], [1, 2, 3, 5]); // { longest: 3, starts: 2 }
 * ```
 */
export function rangeFacts(kvStart: ArrayLike<number>, kvEnd: ArrayLike<number>): RangeFacts {
  let longest = 1;
  const starts = new Set<number>();
  for (let t = 0; t < kvStart.length; t++) {
    longest = Math.max(longest, kvEnd[t] - kvStart[t]);
    starts.add(kvStart[t]);
  }
  return { longest, starts: starts.size };
}
