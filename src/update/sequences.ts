/**
 * Training sequences: a trajectory's tokens as the model sees them (prompt and response end to end), with
 * per-position arrays. Position t scores token t + 1; it trains when that token was sampled (mask 1). So a
 * response token j sits at position promptLength + j - 1.
 */
import type { Gpu } from "../gpu/device.ts";
import { Batch } from "../gpu/batch.ts";
import type { Transformer } from "../model/transformer.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";

/** One sequence to train on, with per-response-token arrays. */
export interface TrainSequence {
  /** Prompt then response ids. */
  ids: number[];
  /** How many of `ids` are the prompt's. */
  promptLength: number;
  /** Per response token: 1 sampled, 0 observation. */
  mask: number[];
  /** Per response token, 1 where the token is scored by no loss at all (a misread reply kept as context). */
  ignore?: number[];
}

/** Spreads per-response-token values onto positions [ids.length] (0 elsewhere). */
export function toPositions(s: TrainSequence, perToken: ArrayLike<number>): Float64Array {
  const out = new Float64Array(s.ids.length);
  for (let j = 0; j < s.mask.length; j++) {
    const p = s.promptLength + j - 1;
    if (p >= 0) out[p] = perToken[j];
  }
  return out;
}

/** Gathers per-position values back onto response tokens (the inverse of toPositions). */
export function fromPositions(s: TrainSequence, perPosition: ArrayLike<number>): number[] {
  return s.mask.map((_, j) => {
    const p = s.promptLength + j - 1;
    return p >= 0 ? perPosition[p] : 0;
  });
}

/**
 * Splits sequences (in order) into groups of at most `maxTokens` tokens; a longer sequence gets a group of its
 * own. Returns index lists.
 */
export function microBatches(seqs: readonly { ids: { readonly length: number } }[], maxTokens: number): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  let tokens = 0;
  seqs.forEach((s, i) => {
    if (cur.length > 0 && tokens + s.ids.length > maxTokens) {
      out.push(cur);
      cur = [];
      tokens = 0;
    }
    cur.push(i);
    tokens += s.ids.length;
  });
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Per-position log-probabilities of each sequence's next tokens under `model` at `temperature` (no gradients),
 * micro-batch by micro-batch: one submit and one readback each.
 */
export async function sequenceLogprobs(
  gpu: Gpu,
  model: Transformer,
  seqs: readonly TrainSequence[],
  o: { temperature: number; maxTokens: number },
): Promise<Float32Array[]> {
  const out: Float32Array[] = new Array(seqs.length);
  for (const group of microBatches(seqs, o.maxTokens)) {
    const inputs = new PackedInputs(gpu, packSequences(group.map((i) => ({ ids: seqs[i].ids }))));
    const batch = new Batch(gpu);
    const r = model.forward(batch, inputs, { temperature: o.temperature });
    const [logp] = await batch.read([r.logp]);
    r.logp.release();
    r.entropy.release();
    inputs.release();
    let at = 0;
    for (const i of group) {
      out[i] = (logp as Float32Array).slice(at, at + seqs[i].ids.length);
      at += seqs[i].ids.length;
    }
  }
  return out;
}
