/**
 * The policy update of one RL step: `ppo_epochs` passes over mini-batches, each split into micro-batches by token
 * budget with gradient accumulation, then one AdamW step. Aggregation weights come from the whole mini-batch, so
 * the loss and its gradient do not depend on the micro-batch split. Per mini-batch: one submit, one readback.
 */
import { Batch } from "../gpu/batch.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";
import { aggregationWeights, type LossAggMode } from "../rl/aggregation.ts";
import type { Learner } from "./learner.ts";
import type { AdamW, StepStats } from "./optimizer.ts";
import { policyLossHead, uploadPolicyInputs } from "./policy_head.ts";
import { type PolicyMetrics, policyMetrics, type ResolvedPolicyLoss } from "../rl/policy_loss.ts";
import { microBatches, toPositions, type TrainSequence } from "./sequences.ts";

/** One sequence of the update with its per-response-token inputs. */
export interface UpdateSequence extends TrainSequence {
  /** Mini-batch group (sequences of one prompt stay in one mini-batch). */
  group: number;
  /** Per response token. */
  advantages: number[];
  /** Per response token: the behaviour log-probability. */
  oldLogp: number[];
  /** Per response token: the reference policy's log-probability, with a KL term. */
  refLogp?: number[];
  /** PPO with a critic: the critic's values before the update, and the GAE returns it learns. */
  oldValues?: number[];
  /** Per response token: the returns the critic learns. */
  returns?: number[];
}

/** Settings of the update. */
export interface UpdateSettings {
  ppoEpochs: number;
  /** Groups (prompts) per mini-batch. */
  miniBatchGroups: number;
  microBatchTokens: number;
  lossAggMode: LossAggMode;
  /** The actor's loss, resolved once for the step (resolvePolicyLoss). */
  loss: ResolvedPolicyLoss;
  temperature: number;
  /** Learning rate of each optimizer step, by 1-based optimizer step count. */
  lr: (optimizerStep: number) => number;
  /** Compute every micro-batch, even those whose gradient is exactly 0 (tests compare the two). */
  computeAll?: boolean;
}

/** What one optimizer step did. */
export interface MiniBatchResult extends PolicyMetrics {
  /** The gradient norm before clipping. */
  gradNorm: number;
  /** False when the gradient norm was not finite and the step was skipped. */
  applied: boolean;
  /** The learning rate of the step. */
  lr: number;
  /** Micro-batches whose gradient is exactly 0 (every advantage 0, no KL or entropy term): not computed. */
  skipped: number;
  /**
   * Micro-batches whose forward and backward ran. With none, the policy metrics measured nothing (they read 0) and
   * the gradient norm is that of an all-zero gradient: the step's log leaves them out.
   */
  computed: number;
  /** Whether the loss had a KL term (a reference policy); without one `klLoss` is not a measurement. */
  withKl: boolean;
  /**
   * Share of the mini-batch's aggregation weight on the computed micro-batches (1 when none was skipped). `entropy`
   * is already scaled up by its inverse, so it estimates the whole mini-batch from the tokens that ran.
   */
  computedShare: number;
}

/** Runs the update over `seqs`; returns one result per optimizer step taken. */
export async function rlUpdate(
  l: Learner,
  opt: AdamW,
  s: UpdateSettings & { seqs: readonly UpdateSequence[] },
): Promise<MiniBatchResult[]> {
  const seqs = s.seqs;
  const groups = [...new Set(seqs.map((q) => q.group))];
  const results: MiniBatchResult[] = [];
  for (let epoch = 0; epoch < s.ppoEpochs; epoch++) {
    for (let g0 = 0; g0 < groups.length; g0 += s.miniBatchGroups) {
      const chosen = new Set(groups.slice(g0, g0 + s.miniBatchGroups));
      const mini = seqs.filter((q) => chosen.has(q.group));
      results.push(await miniBatchStep(l, opt, mini, s));
    }
  }
  return results;
}

/**
 * The mini-batch with the sequences whose trained tokens all have advantage 0 moved to the end (each part in its
 * order), so they fill micro-batches of their own, which the update skips when their gradient is exactly 0. Packed in
 * the rollout's order, a group without signal shared micro-batches with groups that had one, and about three quarters
 * of the main job's tokens ran forward and backward where half carried a gradient. The aggregation weights come from
 * the whole mini-batch, so the order changes no sequence's weight.
 */
export function liveFirst<T extends Trained>(mini: readonly T[]): T[] {
  return [...mini.filter(live), ...mini.filter((q) => !live(q))];
}

type Trained = { advantages: readonly number[]; mask: readonly number[] };

/** Whether a trained token (mask 1) of the sequence has a nonzero advantage: without one its gradient is 0. */
function live(q: Trained): boolean {
  return q.advantages.some((a, j) => a !== 0 && q.mask[j] !== 0);
}

async function miniBatchStep(
  l: Learner,
  opt: AdamW,
  given: readonly UpdateSequence[],
  s: UpdateSettings,
): Promise<MiniBatchResult> {
  const { gpu, model, grads } = l;
  const mini = liveFirst(given);
  const weights = aggregationWeights(mini.map((q) => q.mask), s.lossAggMode);
  const batch = new Batch(gpu);
  grads.clear(batch);
  const statsTensors = [];
  const release: (() => void)[] = [];
  // Without a KL or entropy term, a token's gradient is its weight times its advantage times the surrogate's slope.
  const { klCoef, entropyCoef } = s.loss.settings;
  const advantageOnly = !s.computeAll && (!s.loss.kl || !klCoef) && !entropyCoef;
  let skipped = 0, weightAll = 0, weightRun = 0;
  const weightOf = (i: number) => mini[i].mask.reduce((a, m, t) => a + m * weights[i][t], 0);
  for (const group of microBatches(mini, s.microBatchTokens)) {
    const part = group.map((i) => mini[i]);
    const w = group.reduce((a, i) => a + weightOf(i), 0);
    weightAll += w;
    if (advantageOnly && !part.some(live)) {
      skipped++; // every gradient of this micro-batch is 0: no forward or backward to run
      continue;
    }
    weightRun += w;
    const cat = (f: (q: UpdateSequence, i: number) => ArrayLike<number>) => {
      const out: number[] = [];
      part.forEach((q, k) => out.push(...toPositions(q, f(q, group[k]))));
      return out;
    };
    const inputs = new PackedInputs(gpu, packSequences(part.map((q) => ({ ids: q.ids }))));
    const policyInputs = uploadPolicyInputs(gpu, {
      oldLogp: cat((q) => q.oldLogp),
      refLogp: part[0].refLogp ? cat((q) => q.refLogp!) : undefined,
      advantages: cat((q) => q.advantages),
      weights: cat((_, i) => weights[i]),
    });
    const head = policyLossHead(gpu, policyInputs, s.loss);
    const out = model.forward(batch, inputs, { grads, lossGrad: head.grad, temperature: s.temperature });
    statsTensors.push(head.stats);
    release.push(() => {
      head.release();
      policyInputs.release();
      inputs.release();
      out.logp.release();
      out.entropy.release();
    });
  }
  const lr = s.lr(opt.step + 1);
  opt.record(batch, lr);
  const read = await batch.read([opt.stats, ...statsTensors]);
  for (const r of release) r();
  const step: StepStats = opt.commit(read[0]);
  const metrics = policyMetrics(read.slice(1), s.loss.settings);
  const computedShare = weightAll > 0 ? weightRun / weightAll : 1;
  if (skipped > 0 && weightRun > 0) metrics.entropy *= weightAll / weightRun;
  return {
    ...metrics,
    gradNorm: step.gradNorm,
    applied: step.applied,
    lr,
    skipped,
    computed: statsTensors.length,
    withKl: s.loss.kl !== undefined,
    computedShare,
  };
}
