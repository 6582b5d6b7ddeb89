/**
 * Supervised fine-tuning on multi-turn sequences: the loss is the mean negative log-likelihood of the trained
 * (mask 1) tokens of each optimizer step, whatever the micro-batch split. Sequences are shuffled per epoch by a
 * generator seeded from (seed, epoch), so a resumed run sees the same order.
 */
import { Batch } from "../gpu/batch.ts";
import { Rng } from "../util/random.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";
import { nllGrad } from "./nll.ts";
import { faultPoint } from "./faults.ts";
import { spikeAt } from "./rollback.ts";
import type { Learner } from "../update/learner.ts";
import type { AdamW } from "../update/optimizer.ts";
import { microBatches, toPositions, type TrainSequence } from "../update/sequences.ts";

/** Settings of one SFT run. */
export interface SftSettings {
  /** Tokens per optimizer step. */
  batchTokens: number;
  /** Tokens per forward/backward (memory). */
  microBatchTokens: number;
  seed: number;
  lr: (optimizerStep: number) => number;
  /**
   * Weight of the language-modelling loss on every other token (prompt and observations) relative to the
   * assistant's: 0 trains on assistant turns only. Items repeat across a TextCraft command list, so predicting the
   * context trains the copying a policy needs, on many more tokens per step.
   */
  contextWeight?: number;
}

/** One optimizer step's numbers. */
export interface SftStep {
  step: number;
  epoch: number;
  /** Mean negative log-likelihood of the assistant's tokens (whatever contextWeight is). */
  loss: number;
  tokens: number;
  targets: number;
  gradNorm: number;
  lr: number;
  applied: boolean;
}

/**
 * The sequences of each epoch: the same list every epoch, or a fresh one per epoch (e.g. renamed copies), with a
 * fractional last epoch cut short. `epochOf(e)` must be deterministic so a resumed run sees the same data.
 */
export function sftEpochs(
  epochs: number,
  epochOf: (epoch: number) => TrainSequence[],
): TrainSequence[][] {
  const out: TrainSequence[][] = [];
  for (let e = 0; e < Math.ceil(epochs); e++) {
    const all = epochOf(e);
    out.push(e + 1 <= epochs ? all : all.slice(0, Math.round(all.length * (epochs - e))));
  }
  return out;
}

/** The optimizer steps of an SFT run, in order: an epoch and the indices of its sequences, shuffled per epoch. */
export function sftPlan(epochs: readonly (readonly TrainSequence[])[], s: Pick<SftSettings, "batchTokens" | "seed">) {
  const steps: { epoch: number; seqs: number[] }[] = [];
  epochs.forEach((seqs, epoch) => {
    const order = new Rng(s.seed * 7919 + epoch).shuffle(seqs.map((_, i) => i));
    for (const group of microBatches(order.map((i) => seqs[i]), s.batchTokens)) {
      steps.push({ epoch, seqs: group.map((k) => order[k]) });
    }
  });
  return steps;
}

/** What {@linkcode runSft} runs. */
export interface SftRun {
  /** The sequences of each epoch (see sftEpochs). */
  epochs: readonly (readonly TrainSequence[])[];
  settings: SftSettings;
  /** Optimizer steps already done (a resumed run starts there). */
  from: number;
  /** Sees each step's numbers (and may save a checkpoint). */
  onStep: (r: SftStep) => Promise<void> | void;
  /** Polled between steps: true stops the run after the step in progress. */
  stop?: () => boolean;
}

/** Runs optimizer steps [from, plan.length) of SFT. */
export async function runSft(l: Learner, opt: AdamW, o: SftRun): Promise<void> {
  const { epochs, settings: s } = o;
  const stop = o.stop ?? (() => false);
  const plan = sftPlan(epochs, s);
  for (let k = o.from; k < plan.length && !stop(); k++) {
    const chosen = spikeAt(`sft step ${k + 1}`, plan[k].seqs.map((i) => epochs[plan[k].epoch][i]));
    const { sequenceLoss: _, ...r } = await supervisedStep(l, opt, { seqs: chosen, ...s });
    await o.onStep({ step: k + 1, epoch: plan[k].epoch, ...r });
    faultPoint(`sft step ${k + 1}`);
  }
}

/** One supervised optimizer step's numbers. */
export interface SupervisedStep extends Omit<SftStep, "step" | "epoch"> {
  /** Mean NLL of each sequence's trained tokens, in the order given (NaN for a sequence with none). */
  sequenceLoss: number[];
}

/**
 * One optimizer step on `seqs`: the mean NLL of their trained (mask 1) tokens, plus `contextWeight` times the NLL of
 * every other scored token (none of an `ignore`d one), split into micro-batches of `microBatchTokens`; one submit and
 * one readback.
 */
export async function supervisedStep(
  l: Learner,
  opt: AdamW,
  s: Pick<SftSettings, "microBatchTokens" | "contextWeight" | "lr"> & { seqs: readonly TrainSequence[] },
): Promise<SupervisedStep> {
  const { gpu, model, grads } = l;
  const chosen = s.seqs;
  const targets = chosen.reduce((n, q) => n + q.mask.reduce((a, b) => a + b, 0), 0);
  const batch = new Batch(gpu);
  grads.clear(batch);
  const logps = [], release: (() => void)[] = [];
  const weightsOf: number[][] = [];
  for (const group of microBatches(chosen, s.microBatchTokens)) {
    const part = group.map((i) => chosen[i]);
    const assistant = part.flatMap((q) => [...toPositions(q, q.mask)]);
    weightsOf.push(assistant.map((m) => (targets > 0 ? m / targets : 0)));
    const alpha = s.contextWeight ?? 0;
    // Position p scores token p + 1; the last position of each sequence scores nothing.
    const last = new Set<number>();
    part.reduce((end, q) => (last.add(end + q.ids.length - 1), end + q.ids.length), 0);
    const ignored = part.flatMap((q) => [...(q.ignore ? toPositions(q, q.ignore) : new Float64Array(q.ids.length))]);
    const w = assistant.map((m, p) => targets === 0 || last.has(p) || ignored[p] ? 0 : (m ? 1 : alpha) / targets);
    const inputs = new PackedInputs(gpu, packSequences(part.map((q) => ({ ids: q.ids }))));
    const nll = nllGrad(gpu, w);
    const out = model.forward(batch, inputs, { grads, lossGrad: nll.grad });
    logps.push(out.logp);
    release.push(() => {
      nll.release();
      inputs.release();
      out.logp.release();
      out.entropy.release();
    });
  }
  const lr = s.lr(opt.step + 1);
  opt.record(batch, lr);
  const read = await batch.read([opt.stats, ...logps]);
  for (const r of release) r();
  const stats = opt.commit(read[0]);
  let loss = 0;
  read.slice(1).forEach((lp, i) => lp.forEach((v, t) => (loss -= v * weightsOf[i][t])));
  const tokens = chosen.reduce((n, q) => n + q.ids.length, 0);
  const sequenceLoss = perSequence(chosen, microBatches(chosen, s.microBatchTokens), read.slice(1));
  return { loss, tokens, targets, gradNorm: stats.gradNorm, lr, applied: stats.applied, sequenceLoss };
}

// Mean NLL of each sequence's trained tokens, from the micro-batches' per-position log-probabilities.
function perSequence(seqs: readonly TrainSequence[], groups: number[][], logps: ArrayLike<number>[]): number[] {
  const out = new Array<number>(seqs.length);
  groups.forEach((group, g) => {
    let at = 0;
    for (const i of group) {
      const q = seqs[i], trained = toPositions(q, q.mask);
      let sum = 0, n = 0;
      for (let p = 0; p + 1 < q.ids.length; p++) if (trained[p]) (sum -= logps[g][at + p]), n++;
      out[i] = n === 0 ? NaN : sum / n;
      at += q.ids.length;
    }
  });
  return out;
}
