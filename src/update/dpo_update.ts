/**
 * DPO on the GPU over preference pairs of multi-turn sequences: a pair's two sequences share a prompt, and each one's
 * log-probability is the sum (IPO: the mean, as TRL takes it) of its trained positions' logp, the agent's turns only
 * (the masks SFT and RL train on). Per micro-batch of whole pairs, one recording: a forward without gradients gives
 * every position's logp, the DPO kernel (src/ops/dpo_loss.ts) turns them into each pair's loss and a per-position
 * gradient (a per-sequence scalar on each trained position), and a forward-backward takes that gradient as its head
 * gradient. One submit and one readback per optimizer step; the two forwards see the same weights, so the loss is
 * the one whose gradient is applied. The reference's log-probabilities are measured once per pair, by the same
 * forward and kernel, and kept.
 */
import { Batch } from "../gpu/batch.ts";
import { empty, type Tensor, zeros } from "../gpu/tensor.ts";
import type { HeadGrad } from "../model/head.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";
import { DPO_LOSS_CODES, DPO_STATS, dpoLossForward, type PairSpan, uploadDpoInputs } from "../ops/dpo_loss.ts";
import { type DpoMetrics, dpoMetrics, type DpoOptions, dpoSettings, meanLogps } from "../rl/dpo.ts";
import type { Learner } from "./learner.ts";
import type { AdamW } from "./optimizer.ts";
import { microBatches, toPositions, type TrainSequence } from "./sequences.ts";

/** Two sequences of one prompt: the preferred one and the other. */
export interface PreferencePair {
  chosen: TrainSequence;
  rejected: TrainSequence;
}

/** A pair with the frozen reference's log-probabilities of its two sequences. */
export interface ReferencedPair extends PreferencePair {
  refChosen: number;
  refRejected: number;
}

/** Settings of the DPO update. */
export interface DpoUpdateSettings extends DpoOptions {
  /** Tokens per forward/backward (memory); a pair is never split, so a long one gets a micro-batch of its own. */
  microBatchTokens: number;
}

/** Each position's weight in its sequence's log-probability: 1 on trained positions, or 1/n for the mean. */
export function positionWeights(s: TrainSequence, mean: boolean): Float64Array {
  const w = toPositions(s, s.mask.map((m) => (m === 1 ? 1 : 0)));
  const n = w.reduce((a, x) => a + x, 0);
  if (mean && n > 0) { for (let t = 0; t < w.length; t++) w[t] /= n; }
  return w;
}

/** Micro-batches of whole pairs, in order, by their tokens. */
function pairBatches(pairs: readonly PreferencePair[], maxTokens: number): number[][] {
  return microBatches(pairs.map((p) => ({ ids: { length: p.chosen.ids.length + p.rejected.ids.length } })), maxTokens);
}

/** What one micro-batch recorded: its [P, 5] statistics (DPO_STATS), to read after the submit. */
interface Recorded {
  stats: Tensor;
  release(): void;
}

/**
 * Records one micro-batch of pairs: the forward, the DPO kernel against `reference` ([P, 2]; zeros measure the
 * policy's log-probabilities alone) and, with `grads`, the forward-backward that accumulates the gradient of
 * `scale` · Σ loss into them.
 */
export function recordDpo(
  batch: Batch,
  l: Learner,
  o: { pairs: readonly PreferencePair[]; reference: ArrayLike<number>; scale: number; settings: DpoOptions },
  train: boolean,
): Recorded {
  const s = dpoSettings(o.settings), gpu = l.gpu;
  const seqs = o.pairs.flatMap((p) => [p.chosen, p.rejected]);
  const mean = meanLogps(s.lossType);
  const weights = seqs.flatMap((q) => [...positionWeights(q, mean)]);
  const spans: PairSpan[] = [];
  let at = 0;
  for (const p of o.pairs) {
    const [c, r] = [p.chosen.ids.length, p.rejected.ids.length];
    spans.push({ chosen: [at, c], rejected: [at + c, r] });
    at += c + r;
  }
  const packed = new PackedInputs(gpu, packSequences(seqs.map((q) => ({ ids: q.ids }))));
  const inputs = uploadDpoInputs(gpu, { weights, spans, reference: o.reference });
  const T = weights.length, P = o.pairs.length;
  const first = l.model.forward(batch, packed);
  const dlogp = empty(gpu, [T], "f32", "dpo dlogp"), stats = empty(gpu, [P, DPO_STATS.length], "f32", "dpo stats");
  dpoLossForward(batch, { logp: first.logp, inputs, dlogp, stats }, {
    lossCode: DPO_LOSS_CODES[s.lossType],
    beta: s.beta,
    labelSmoothing: s.labelSmoothing,
    scale: o.scale,
  });
  const dentropy = train ? zeros(gpu, [T]) : undefined;
  const view = (t: Tensor, start: number, count: number) => (count === T ? t : t.view(start, [count]));
  const lossGrad: HeadGrad = (_b, c) => ({
    dlogp: view(dlogp, c.start, c.count),
    dentropy: view(dentropy!, c.start, c.count),
  });
  const second = train ? l.model.forward(batch, packed, { grads: l.grads, lossGrad }) : undefined;
  return {
    stats,
    release() {
      for (const t of [first.logp, first.entropy, second?.logp, second?.entropy, dlogp, dentropy, stats]) t?.release();
      inputs.release();
      packed.release();
    },
  };
}

/**
 * The policy's log-probability of each pair's two sequences, as DPO sums them (one submit and readback per
 * micro-batch): the reference's, when measured on the starting weights.
 */
export async function pairLogps(
  l: Learner,
  pairs: readonly PreferencePair[],
  s: DpoUpdateSettings,
): Promise<{ chosen: number[]; rejected: number[] }> {
  const chosen: number[] = [], rejected: number[] = [];
  for (const group of pairBatches(pairs, s.microBatchTokens)) {
    const batch = new Batch(l.gpu);
    const part = group.map((i) => pairs[i]);
    const r = recordDpo(
      batch,
      l,
      { pairs: part, reference: new Float32Array(2 * part.length), scale: 0, settings: s },
      false,
    );
    const [stats] = await batch.read([r.stats]);
    r.release();
    const S = DPO_STATS.length;
    part.forEach((_, k) => (chosen.push(stats[k * S + 3]), rejected.push(stats[k * S + 4])));
  }
  return { chosen, rejected };
}

/** One DPO optimizer step's numbers: TRL's metrics and the optimizer's. */
export interface DpoStep extends DpoMetrics {
  /** Mean log-probability of the chosen and of the rejected sequences under the policy. */
  "logps/chosen": number;
  "logps/rejected": number;
  pairs: number;
  tokens: number;
  gradNorm: number;
  applied: boolean;
  lr: number;
}

/** One optimizer step on `pairs`: the mean DPO loss over them, micro-batched by tokens; one submit, one readback. */
export async function dpoStep(
  l: Learner,
  opt: AdamW,
  o: { pairs: readonly ReferencedPair[]; settings: DpoUpdateSettings; lr: (optimizerStep: number) => number },
): Promise<DpoStep> {
  const pairs = o.pairs, batch = new Batch(l.gpu);
  l.grads.clear(batch);
  const recorded = pairBatches(pairs, o.settings.microBatchTokens).map((group) => {
    const part = group.map((i) => pairs[i]);
    const reference = part.flatMap((p) => [p.refChosen, p.refRejected]);
    return recordDpo(batch, l, { pairs: part, reference, scale: 1 / pairs.length, settings: o.settings }, true);
  });
  const lr = o.lr(opt.step + 1);
  opt.record(batch, lr);
  const read = await batch.read([opt.stats, ...recorded.map((r) => r.stats)]);
  for (const r of recorded) r.release();
  const stats = opt.commit(read[0]);
  const col = (c: number) => read.slice(1).flatMap((t) => Array.from(t).filter((_, i) => i % DPO_STATS.length === c));
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  return {
    ...dpoMetrics({ losses: col(0), chosenRewards: col(1), rejectedRewards: col(2) }),
    "logps/chosen": mean(col(3)),
    "logps/rejected": mean(col(4)),
    pairs: pairs.length,
    tokens: pairs.reduce((n, p) => n + p.chosen.ids.length + p.rejected.ids.length, 0),
    gradNorm: stats.gradNorm,
    applied: stats.applied,
    lr,
  };
}
