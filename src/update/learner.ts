/**
 * The learner: the model being trained, on the GPU, and its gradient buffers. Each training phase (SFT, RL) makes
 * its own optimizer over it, so the two phases never share moments. With LoRA the base is frozen: gradients, and
 * the optimizer's moments, exist for the adapter's A and B alone.
 */
import type { RunConfig } from "../config/schema.ts";
import type { Gpu } from "../gpu/device.ts";
import type { ModelConfig } from "../model/config.ts";
import { type LoraModelOptions, loraTransformer } from "../model/lora_model.ts";
import { Transformer } from "../model/transformer.ts";
import { TensorSet } from "../model/weights.ts";
import { AdamW } from "./optimizer.ts";

/** A model with gradient buffers. */
export interface Learner {
  /** The device it lives on. */
  gpu: Gpu;
  /** The model being trained (with its LoRA adapter, when it has one). */
  model: Transformer;
  /** Gradient buffers of what trains: every parameter, or the adapter's A and B. */
  grads: TensorSet;
}

/** Puts host parameters on the GPU (frozen, with an adapter, when `lora` says) with zeroed gradients. */
export function createLearner(
  gpu: Gpu,
  host: { config: ModelConfig; tensors: ReadonlyMap<string, Float32Array> },
  o: { recompute?: boolean; lora?: LoraModelOptions } = {},
): Learner {
  if (o.lora) {
    const model = loraTransformer(gpu, host.config, host.tensors, { ...o.lora, recompute: o.recompute });
    return { gpu, model, grads: TensorSet.zeros(gpu, host.config, model.lora!.tensors.specs) };
  }
  return {
    gpu,
    model: Transformer.fromHost(gpu, host.config, host.tensors, o),
    grads: TensorSet.zeros(gpu, host.config),
  };
}

/** What the learner's optimizer updates: its LoRA adapter, or every parameter. */
export function trainable(l: Learner): TensorSet {
  return l.model.lora?.tensors ?? l.model.weights;
}

/** An AdamW over the learner with the actor's betas and eps, and a phase's decay and clipping. */
export function phaseOptimizer(l: Learner, c: RunConfig, o: { weightDecay: number; maxGradNorm: number }): AdamW {
  return new AdamW(l.gpu, trainable(l), l.grads, {
    beta1: c.actor.betas[0],
    beta2: c.actor.betas[1],
    eps: c.actor.eps,
    weightDecay: o.weightDecay,
    maxGradNorm: o.maxGradNorm,
  });
}

/** Counts optimizer steps skipped in a row (non-finite gradients) and says when a run should stop. */
export class SkipGuard {
  #run = 0;

  constructor(readonly limit: number, readonly lrKey: string, readonly lr: number) {}

  /** Records a step; true when `limit` steps in a row were skipped. */
  record(applied: boolean): boolean {
    this.#run = applied ? 0 : this.#run + 1;
    return this.#run >= this.limit;
  }

  /** The error that stops the run, naming the likely cause and `next`, the way back. */
  error(next: string): Error {
    return new RangeError(
      `${this.#run} optimizer steps in a row were skipped because the gradient norm was not finite: training is ` +
        `diverging. The learning rate (${this.lrKey}=${this.lr}) is the likely cause. ${next}`,
    );
  }
}
