/**
 * PPO's critic (algorithm.adv_estimator=gae): a value head on a copy of the starting model's backbone, as verl's
 * critic is (a *ForTokenClassification model with one label), or on the actor's own features with only the head
 * trained (critic.share_backbone). It values every response token from the state before it (the position that
 * predicts the token), on the same token-in/token-out sequences the policy trains on, and learns the GAE returns
 * with verl's clipped value loss, aggregated like the actor's loss.
 */
import { Batch } from "../gpu/batch.ts";
import { fromHost } from "../gpu/tensor.ts";
import type { ModelConfig } from "../model/config.ts";
import { PackedInputs, packSequences } from "../model/packing.ts";
import { VALUE_BIAS, VALUE_HEAD } from "../model/params.ts";
import { Transformer } from "../model/transformer.ts";
import { TensorSet } from "../model/weights.ts";
import type { RunConfig } from "../config/schema.ts";
import type { Learner } from "./learner.ts";
import { AdamW } from "./optimizer.ts";
import { fromPositions, microBatches, toPositions, type TrainSequence } from "./sequences.ts";
import { valueLoss } from "../rl/value_loss.ts";

/** What one critic update did. */
export interface CriticStep {
  /** The aggregated clipped value loss. */
  valueLoss: number;
  /** verl's vf_clipfrac: the share of tokens whose clipped branch was larger. */
  clipfrac: number;
  /** The critic's gradient norm before clipping. */
  gradNorm: number;
  /** False when the gradient norm was not finite and the step was skipped. */
  applied: boolean;
}

/** The critic's config: the actor's with a value head. */
export function criticConfig(actor: ModelConfig): ModelConfig {
  return { ...actor, valueHead: true };
}

/** A critic over a learner's model. */
export class Critic {
  /** The value model: the backbone (its own copy, or the actor's) with a value head. */
  readonly model: Transformer;
  /** Its gradient buffers. */
  readonly grads: TensorSet;
  /** Its optimizer (critic.lr, critic.weight_decay, critic.grad_clip). */
  readonly opt: AdamW;

  /**
   * A fresh critic from the actor's starting weights (its own copy) with a zero value head, or over the actor's
   * own backbone tensors when `share_backbone` (then only the head has gradients that the optimizer applies).
   */
  constructor(readonly actor: Learner, readonly c: RunConfig, start: ReadonlyMap<string, Float32Array>) {
    const config = criticConfig(actor.model.config);
    const gpu = actor.gpu;
    const zeroHead = new Map([
      [VALUE_HEAD, new Float32Array(config.hiddenSize)],
      [VALUE_BIAS, new Float32Array(1)],
    ]);
    const host = new Map([...start].filter(([k]) => k !== "lm_head.weight"));
    for (const [k, v] of zeroHead) if (!host.has(k)) host.set(k, v);
    const weights = c.critic.share_backbone
      ? new TensorSet(
        gpu,
        config,
        (spec) =>
          spec.name === VALUE_HEAD || spec.name === VALUE_BIAS
            ? fromHost(gpu, host.get(spec.name)!, spec.shape)
            : actor.model.weights.stored(spec.name),
      )
      : TensorSet.fromHost(gpu, config, host);
    this.model = new Transformer(gpu, config, weights);
    this.grads = TensorSet.zeros(gpu, config);
    const settings = {
      beta1: c.actor.betas[0],
      beta2: c.actor.betas[1],
      eps: c.actor.eps,
      weightDecay: c.critic.weight_decay,
      maxGradNorm: c.critic.grad_clip,
    };
    this.opt = new AdamW(gpu, weights, this.grads, settings, c.critic.share_backbone ? headOnly : undefined);
  }

  /** Per response token, the value of the state before it (one forward per micro-batch, one readback each). */
  async values(seqs: readonly TrainSequence[]): Promise<number[][]> {
    const out: number[][] = new Array(seqs.length);
    for (const group of microBatches(seqs, this.c.actor.ppo_micro_batch_tokens)) {
      const part = group.map((i) => seqs[i]);
      const inputs = new PackedInputs(this.actor.gpu, packSequences(part.map((q) => ({ ids: q.ids }))));
      const batch = new Batch(this.actor.gpu);
      const v = this.model.values(batch, inputs);
      const [read] = await batch.read([v]); // a sync point per micro-batch
      v.release();
      inputs.release();
      let at = 0;
      for (const i of group) {
        out[i] = fromPositions(seqs[i], read.subarray(at, at + seqs[i].ids.length));
        at += seqs[i].ids.length;
      }
    }
    return out;
  }

  /**
   * One optimizer step on a mini-batch: the current values (a forward), the clipped value loss and its gradient
   * on the host, then a forward and backward per micro-batch with that gradient, and AdamW.
   */
  async update(
    seqs: readonly TrainSequence[],
    old: readonly number[][],
    returns: readonly number[][],
    lr: number,
  ): Promise<CriticStep> {
    const now = await this.values(seqs);
    const masks = seqs.map((q) => q.mask);
    const loss = valueLoss(now, old, returns, masks, this.c.actor.loss_agg_mode, {
      clipRange: this.c.critic.cliprange_value,
    });
    const gpu = this.actor.gpu;
    const batch = new Batch(gpu);
    this.grads.clear(batch);
    const release: (() => void)[] = [];
    for (const group of microBatches(seqs, this.c.actor.ppo_micro_batch_tokens)) {
      const part = group.map((i) => seqs[i]);
      const dv = group.flatMap((i) => [...toPositions(seqs[i], loss.grads[i])]);
      const inputs = new PackedInputs(gpu, packSequences(part.map((q) => ({ ids: q.ids }))));
      const dValues = fromHost(gpu, Float32Array.from(dv), [dv.length, 1]);
      const v = this.model.values(batch, inputs, { grads: this.grads, dValues });
      release.push(() => [v, dValues, inputs].forEach((t) => t.release()));
    }
    this.opt.record(batch, lr);
    const [stats] = await batch.read([this.opt.stats]);
    for (const r of release) r();
    const step = this.opt.commit(stats);
    return { valueLoss: loss.loss, clipfrac: loss.clipfrac, gradNorm: step.gradNorm, applied: step.applied };
  }

  /** Releases the critic's own tensors (not a shared backbone's). */
  release(): void {
    this.opt.release();
    this.grads.release();
    if (!this.c.critic.share_backbone) this.model.weights.release();
    else for (const n of [VALUE_HEAD, VALUE_BIAS]) this.model.weights.get(n).release();
  }
}

/** With a shared backbone, the critic's optimizer applies only to the value head. */
function headOnly(name: string): boolean {
  return name === VALUE_HEAD || name === VALUE_BIAS;
}
