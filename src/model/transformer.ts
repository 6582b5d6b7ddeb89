/**
 * The whole model over a packed batch: embedding, layers, final norm and the chunked LM head, forward and (when
 * gradients are asked for) backward into every parameter, all recorded into one batch for one submit.
 *
 * With `recompute`, the forward keeps only each layer's input and the backward re-runs a layer's forward just
 * before differentiating it: about (L - 1) layers' activations less memory for one more forward's compute.
 */
import type { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { embeddingBackward, embeddingForward } from "../ops/embedding.ts";
import { rmsnormBackward, rmsnormForward } from "../ops/rmsnorm.ts";
import { type RopeTable, ropeTable } from "../ops/rope.ts";
import type { ModelConfig } from "./config.ts";
import { type HeadGrad, headPass } from "./head.ts";
import { type LayerActs, layerBackward, type LayerContext, layerForward, releaseActs } from "./layer.ts";
import { act } from "./linear.ts";
import type { PackedInputs } from "./packing.ts";
import { EMBED, FINAL_NORM, LM_HEAD } from "./params.ts";
import { TensorSet } from "./weights.ts";

/** Options of one forward. */
export interface ForwardOptions {
  /** Logits are divided by it before the log-softmax (the sampling temperature). Default 1. */
  temperature?: number;
  /** Backward too: gradients accumulate into `grads` (clear them once per optimizer step). */
  grads?: TensorSet;
  /** The loss gradient per token; required with `grads`. */
  lossGrad?: HeadGrad;
  /** Inference only: also write the full logits [T, V] here. */
  logits?: Tensor;
}

/** Per-token outputs [T] f32 of a forward, on the GPU until the caller reads them. */
export interface ForwardResult {
  logp: Tensor;
  entropy: Tensor;
}

/** A Qwen2-family transformer bound to its parameters on the GPU. */
export class Transformer {
  #rope: RopeTable | undefined;

  constructor(
    readonly gpu: Gpu,
    readonly config: ModelConfig,
    readonly weights: TensorSet,
    readonly options: { recompute?: boolean } = {},
  ) {}

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
      this.#rope = ropeTable(this.gpu, this.config.ropeTheta, this.config.headDim, positions);
    }
    return this.#rope;
  }

  /**
   * Records the forward over a packed batch and, with `grads`, the backward. The returned tensors are the
   * caller's to read and release.
   */
  forward(batch: Batch, inputs: PackedInputs, o: ForwardOptions = {}): ForwardResult {
    const c = this.config, w = this.weights, T = inputs.tokens, C = c.hiddenSize;
    if (o.grads && !o.lossGrad) throw new TypeError("A forward with gradients needs a lossGrad");
    let maxPos = 0;
    for (const p of inputs.batch.positions) maxPos = Math.max(maxPos, p);
    const ctx: LayerContext = { config: c, weights: w, rope: this.rope(maxPos + 1) };
    const training = o.grads !== undefined;
    const recompute = training && this.options.recompute === true;
    // xs[l] is the input of layer l; xs[L] the output of the last one.
    const xs: Tensor[] = [act(batch, [T, C], "x0")];
    embeddingForward(batch, inputs.ids, w.get(EMBED), xs[0]);
    const saved: LayerActs[] = [];
    for (let l = 0; l < c.numLayers; l++) {
      xs.push(act(batch, [T, C], `x${l + 1}`));
      const acts = layerForward(batch, ctx, l, inputs, xs[l], xs[l + 1]);
      if (training && !recompute) saved.push(acts);
      else releaseActs(acts);
      if (!training) xs[l].release();
    }
    const nf = act(batch, [T, C], "nf");
    const rstdF = act(batch, [T]);
    rmsnormForward(batch, { x: xs[c.numLayers], w: w.get(FINAL_NORM), y: nf, rstd: rstdF, eps: c.rmsNormEps });
    const result = { logp: act(batch, [T], "logp"), entropy: act(batch, [T], "entropy") };
    const g = o.grads;
    const dnf = g ? act(batch, [T, C], "dnf") : undefined;
    const head = c.tieWordEmbeddings ? EMBED : LM_HEAD;
    headPass(batch, {
      nf,
      head: w.get(head),
      targets: inputs.targets,
      ...result,
      temperature: o.temperature,
      grad: o.lossGrad && g ? o.lossGrad : undefined,
      dnf,
      dHead: g?.get(head),
      logits: o.logits,
    });
    if (!g) {
      for (const t of [nf, rstdF, xs[c.numLayers]]) t.release();
      return result;
    }
    const dX = act(batch, [T, C], "dX");
    const final = { w: w.get(FINAL_NORM), dw: g.get(FINAL_NORM), betaW: 1 };
    rmsnormBackward(batch, { dy: dnf!, r: xs[c.numLayers], rstd: rstdF, dr: dX, ...final });
    for (const t of [nf, rstdF, dnf!, xs[c.numLayers]]) t.release();
    for (let l = c.numLayers - 1; l >= 0; l--) {
      let acts = saved[l];
      if (recompute) {
        const scratch = act(batch, [T, C]);
        acts = layerForward(batch, ctx, l, inputs, xs[l], scratch);
        scratch.release();
      }
      layerBackward(batch, ctx, l, inputs, acts, dX, g);
      releaseActs(acts);
      xs[l].release();
    }
    embeddingBackward(batch, inputs.buckets, dX, g.get(EMBED));
    dX.release();
    return result;
  }
}
