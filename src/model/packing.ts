/**
 * Packed batches: sequences of unequal length laid end to end in one token axis T, each causal within itself,
 * with per-token targets (the token each position is scored on) and positions restarting at each sequence.
 */
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor } from "../gpu/tensor.ts";
import { type EmbeddingBuckets, embeddingBuckets } from "../ops/embedding.ts";
import { packedCausalRanges } from "../ops/attention.ts";

/** One sequence of a packed batch. */
export interface SequenceInput {
  /** Input token ids. */
  ids: ArrayLike<number>;
  /** Target id per position (ids[t + 1] for next-token scoring); defaults to the next id, 0 at the end. */
  targets?: ArrayLike<number>;
  /** Position of the first token (a continued sequence); defaults to 0. */
  startPosition?: number;
}

/** Host side of a packed batch. */
export interface PackedBatch {
  /** T: total tokens. */
  tokens: number;
  /** Each sequence's length, in order. */
  lengths: number[];
  /** [T] the token ids, sequences end to end. */
  ids: Uint32Array;
  /** [T] each position's target: the next id of its sequence (0 after the last). */
  targets: Uint32Array;
  /** [T] each token's position within its sequence (plus the sequence's start position). */
  positions: Uint32Array;
}

/** Lays sequences end to end. */
export function packSequences(seqs: readonly SequenceInput[]): PackedBatch {
  const lengths = seqs.map((s) => s.ids.length);
  const T = lengths.reduce((a, b) => a + b, 0);
  if (T === 0) throw new RangeError("Cannot pack a batch without tokens");
  const ids = new Uint32Array(T), targets = new Uint32Array(T), positions = new Uint32Array(T);
  let at = 0;
  for (const s of seqs) {
    const n = s.ids.length;
    if (s.targets && s.targets.length !== n) {
      throw new TypeError(`A sequence has ${n} ids but ${s.targets.length} targets`);
    }
    for (let i = 0; i < n; i++) {
      ids[at + i] = s.ids[i];
      targets[at + i] = s.targets ? s.targets[i] : i + 1 < n ? s.ids[i + 1] : 0;
      positions[at + i] = (s.startPosition ?? 0) + i;
    }
    at += n;
  }
  return { tokens: T, lengths, ids, targets, positions };
}

/** A packed batch uploaded: everything the forward and backward index with. */
export class PackedInputs {
  /** [T] u32 token ids. */
  readonly ids: Tensor;
  /** [T] u32 targets. */
  readonly targets: Tensor;
  /** [T] u32 RoPE positions. */
  readonly positions: Tensor;
  /** [T] u32: the first key row each query attends to (its sequence's first token). */
  readonly kvStart: Tensor;
  /** [T] u32: one past the last key row each query attends to (itself: causal). */
  readonly kvEnd: Tensor;
  /** [T] u32: the first query row that attends to each key (itself). */
  readonly qStart: Tensor;
  /** [T] u32: one past the last query row that attends to each key (its sequence's end). */
  readonly qEnd: Tensor;
  /** Host-side grouping of positions by id for the embedding backward. */
  readonly buckets: EmbeddingBuckets;

  /** Uploads a packed batch: ids, targets, positions and the causal attention ranges of its sequences. */
  constructor(readonly gpu: Gpu, readonly batch: PackedBatch) {
    const T = batch.tokens;
    const r = packedCausalRanges(batch.lengths);
    const u32 = (a: Uint32Array) => fromHost(gpu, a, [T], "u32");
    this.ids = u32(batch.ids);
    this.targets = u32(batch.targets);
    this.positions = u32(batch.positions);
    this.kvStart = u32(r.kvStart);
    this.kvEnd = u32(r.kvEnd);
    this.qStart = u32(r.qStart);
    this.qEnd = u32(r.qEnd);
    this.buckets = embeddingBuckets(batch.ids);
  }

  /** T: the batch's tokens. */
  get tokens(): number {
    return this.batch.tokens;
  }

  /** Frees the uploaded tensors. */
  release(): void {
    for (const t of [this.ids, this.targets, this.positions, this.kvStart, this.kvEnd, this.qStart, this.qEnd]) {
      t.release();
    }
  }
}
