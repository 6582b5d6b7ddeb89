/**
 * The whole model over a packed batch: embedding, layers, final norm and the chunked LM head, forward and (when
 * gradients are asked for) backward into every parameter, all recorded into one batch for one submit.
 *
 * With `recompute`, the forward keeps only each layer's input and the backward re-runs a layer's forward just
 * before differentiating it: about (L - 1) layers' activations less memory for one more forward's compute.
 *
 * With a LoRA adapter (`lora`), every projection it targets adds its low-rank term, in training and in inference
 * alike. Another Transformer over the same `weights` without the adapter is the base model (the KL reference of a
 * LoRA run): no copy of the weights is made.
 */
import type { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { embeddingBackward, embeddingForward } from "../ops/embedding.ts";
import { rmsnormBackward, rmsnormForward } from "../ops/rmsnorm.ts";
import { type RopeTable, ropeTableOf } from "../ops/rope.ts";
import type { ModelConfig } from "./config.ts";
import { type HeadGrad, headPass } from "./head.ts";
import { type LayerActs, layerBackward, type LayerContext, layerForward, releaseActs } from "./layer.ts";
import { act, linear, linearBackward } from "./linear.ts";
import type { LoraAdapters } from "./lora.ts";
import type { PackedInputs } from "./packing.ts";
import { VALUE_BIAS, VALUE_HEAD } from "./params.ts";
import { type DecoderPlan, decoderPlan } from "./plan.ts";
import { TensorSet } from "./weights.ts";

/** Options of one forward. */
export interface ForwardOptions {
  /** Logits are divided by it before the log-softmax (the sampling temperature). Default 1. */
  temperature?: number;
  /**
   * Backward too: gradients accumulate into `grads` (clear them once per optimizer step), for the tensors it holds:
   * every parameter, or a LoRA adapter's A and B (the base frozen: none of its weight gradients is computed).
   */
  grads?: TensorSet;
  /** The loss gradient per token; required with `grads`. */
  lossGrad?: HeadGrad;
  /** Inference only: also write the full logits [T, V] here. */
  logits?: Tensor;
}

/** Per-token outputs [T] f32 of a forward, on the GPU until the caller reads them. */
export interface ForwardResult {
  /** [T] f32: log-probability of each position's target. */
  logp: Tensor;
  /** [T] f32: entropy of each position's next-token distribution. */
  entropy: Tensor;
}

/** A Qwen2-family transformer bound to its parameters on the GPU. */
export class Transformer {
  /**
   * The layers' description, derived once from the config (plan.ts).
   *
   * @ignore
   */
  readonly plan: DecoderPlan;
  #rope: RopeTable | undefined;

  /**
   * A model over `weights` (a TensorSet of paramTable(config)); `options.lora` adds an adapter, `options.recompute`
   * recomputes activations in the backward.
   */
  constructor(
    readonly gpu: Gpu,
    readonly config: ModelConfig,
    readonly weights: TensorSet,
    readonly options: { recompute?: boolean; lora?: LoraAdapters } = {},
  ) {
    this.plan = decoderPlan(config);
  }

  /** The LoRA adapter on this model's projections, if any. */
  get lora(): LoraAdapters | undefined {
    return this.options.lora;
  }

  /** Puts host parameters on the GPU and binds a transformer to them (the one way weights reach the GPU). */
  static fromHost(
    gpu: Gpu,
    config: ModelConfig,
    tensors: ReadonlyMap<string, Float32Array>,
    options: { recompute?: boolean } = {},
  ): Transformer {
    return new Transformer(gpu, config, TensorSet.fromHost(gpu, config, tensors), options);
  }

  /** RoPE tables covering positions [0, needed), grown by doubling. */
  rope(needed: number): RopeTable {
    if (!this.#rope || this.#rope.positions < needed) {
      this.#rope?.cos.release();
      this.#rope?.sin.release();
      const positions = Math.max(256, 2 ** Math.ceil(Math.log2(needed)));
      this.#rope = ropeTableOf(this.gpu, this.plan.ropeInvFreq, positions);
    }
    return this.#rope;
  }

  /**
   * What a layer computes with, RoPE tables covering positions [0, needed).
   *
   * @ignore
   */
  layerContext(needed: number): LayerContext {
    return { plan: this.plan, weights: this.weights, rope: this.rope(needed), lora: this.lora };
  }

  /**
   * Records the forward over a packed batch and, with `grads`, the backward. The returned tensors are the
   * caller's to read and release.
   */
  forward(batch: Batch, inputs: PackedInputs, o: ForwardOptions = {}): ForwardResult {
    if (o.grads && !o.lossGrad) throw new TypeError("A forward with gradients needs a lossGrad");
    if (this.config.valueHead) throw new TypeError("This model has a value head: use values(), not forward()");
    const c = this.config, w = this.weights, T = inputs.tokens, C = c.hiddenSize;
    const trunk = this.#trunk(batch, inputs, o.grads !== undefined);
    const result = { logp: act(batch, [T], "logp"), entropy: act(batch, [T], "entropy") };
    const g = o.grads;
    const dnf = g ? act(batch, [T, C], "dnf") : undefined;
    const head = this.plan.head;
    headPass(batch, {
      nf: trunk.nf,
      head: w.stored(head),
      targets: inputs.targets,
      ...result,
      temperature: o.temperature,
      grad: o.lossGrad && g ? o.lossGrad : undefined,
      dnf,
      dHead: g?.findStored(head),
      logits: o.logits,
    });
    this.#finish(batch, inputs, trunk, g && dnf ? { grads: g, dnf } : undefined);
    return result;
  }

  /**
   * A critic's forward (a model whose config has a value head, `score.weight` [1, C] and `score.bias` [1]): the
   * value of every position [T, 1], and with `grads` and `dValues` [T, 1] the backward of Σ dValues · values.
   */
  values(batch: Batch, inputs: PackedInputs, o: { grads?: TensorSet; dValues?: Tensor } = {}): Tensor {
    if (!this.config.valueHead) throw new TypeError("This model has no value head (a critic's config.json has one)");
    if (o.grads && !o.dValues) throw new TypeError("A value backward needs dValues");
    const w = this.weights, T = inputs.tokens, C = this.config.hiddenSize;
    const trunk = this.#trunk(batch, inputs, o.grads !== undefined);
    const values = act(batch, [T, 1], "values");
    linear(batch, trunk.nf, w.get(VALUE_HEAD), values, { bias: w.get(VALUE_BIAS) });
    const g = o.grads;
    let dnf: Tensor | undefined;
    if (g && o.dValues) {
      dnf = act(batch, [T, C], "dnf");
      const head = { w: w.get(VALUE_HEAD), dw: g.get(VALUE_HEAD), db: g.get(VALUE_BIAS) };
      linearBackward(batch, { dy: o.dValues, x: trunk.nf, dx: dnf, ...head });
    }
    this.#finish(batch, inputs, trunk, g && dnf ? { grads: g, dnf } : undefined);
    return values;
  }

  /** Embedding, every layer and the final norm; the activations the backward needs are kept when training. */
  #trunk(batch: Batch, inputs: PackedInputs, training: boolean): Trunk {
    const c = this.config, plan = this.plan, w = this.weights, T = inputs.tokens, C = c.hiddenSize;
    let maxPos = 0;
    for (const p of inputs.batch.positions) maxPos = Math.max(maxPos, p);
    const ctx = this.layerContext(maxPos + 1);
    const recompute = training && this.options.recompute === true;
    const kv = { kind: "packed", inputs, keep: training && !recompute } as const;
    // xs[l] is the input of layer l; xs[L] the output of the last one.
    const xs: Tensor[] = [act(batch, [T, C], "x0")];
    embeddingForward(batch, inputs.ids, w.stored(plan.embed), xs[0]);
    const saved: LayerActs[] = [];
    for (let l = 0; l < c.numLayers; l++) {
      xs.push(act(batch, [T, C], `x${l + 1}`));
      const acts = layerForward(batch, ctx, { layer: l, x: xs[l], out: xs[l + 1], kv });
      if (acts) saved.push(acts);
      if (!training) xs[l].release();
    }
    const nf = act(batch, [T, C], "nf");
    const rstd = act(batch, [T]);
    const final = w.get(plan.finalNorm.weight);
    rmsnormForward(batch, { x: xs[c.numLayers], w: final, y: nf, rstd, eps: plan.eps });
    return { ctx, xs, saved, nf, rstd, recompute };
  }

  /** Releases the trunk's activations, after the backward through it from dnf when training. */
  #finish(batch: Batch, inputs: PackedInputs, t: Trunk, back?: { grads: TensorSet; dnf: Tensor }): void {
    const c = this.config, w = this.weights, T = inputs.tokens, C = c.hiddenSize, L = c.numLayers;
    if (!back) {
      for (const x of [t.nf, t.rstd, t.xs[L]]) x.release();
      return;
    }
    const g = back.grads;
    const dX = act(batch, [T, C], "dX");
    const fn = this.plan.finalNorm.weight;
    const final = { w: w.get(fn), dw: g.find(fn), betaW: 1 };
    rmsnormBackward(batch, { dy: back.dnf, r: t.xs[L], rstd: t.rstd, dr: dX, ...final });
    for (const x of [t.nf, t.rstd, back.dnf, t.xs[L]]) x.release();
    for (let l = L - 1; l >= 0; l--) {
      let acts = t.saved[l];
      if (t.recompute) {
        const scratch = act(batch, [T, C]);
        const kv = { kind: "packed", inputs, keep: true } as const;
        acts = layerForward(batch, t.ctx, { layer: l, x: t.xs[l], out: scratch, kv })!;
        scratch.release();
      }
      layerBackward(batch, t.ctx, { layer: l, inputs, acts, dX, grads: g });
      releaseActs(acts);
      t.xs[l].release();
    }
    const dEmbed = g.findStored(this.plan.embed);
    if (dEmbed) embeddingBackward(batch, inputs.buckets, dX, dEmbed);
    dX.release();
  }
}

/** What the backward needs of a trunk's forward. */
interface Trunk {
  ctx: LayerContext;
  xs: Tensor[];
  saved: LayerActs[];
  nf: Tensor;
  rstd: Tensor;
  recompute: boolean;
}
