/** AdamW with decoupled weight decay, bias correction, and the clip scale and skip flag read on the GPU. */
import source from "../../shaders/adamw.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";

const SHADER: Shader = { name: "adamw", source };

const PARAMS = uniforms(
  [
    ["n", "u32"],
    ["lr", "f32"],
    ["beta1", "f32"],
    ["beta2", "f32"],
    ["eps", "f32"],
    ["weightDecay", "f32"],
    ["bc1", "f32"],
    ["bc2", "f32"],
    ["decayEnd", "u32"],
  ] as const,
);

/** Hyperparameters of one AdamW step. */
export interface AdamwSettings {
  /** The learning rate of this step. */
  lr: number;
  /** β1, the first moment's decay (default 0.9). */
  beta1?: number;
  /** β2, the second moment's decay (default 0.999). */
  beta2?: number;
  /** ε added to the second moment's root (default 1e-8). */
  eps?: number;
  /** Decoupled weight decay λ: w -= lr · λ · w (default 0.01). */
  weightDecay?: number;
  /** 1-based count of updates applied so far including this one (bias correction). */
  step: number;
  /**
   * Weight decay applies to elements [0, decayEnd) only (an arena chunk holds its decayed tensors first); default
   * all of them.
   */
  decayEnd?: number;
}

/** The tensors of one parameter: all [n] f32. */
export interface AdamwState {
  /** The parameter, updated in place. */
  w: Tensor;
  /** Its gradient, read. */
  g: Tensor;
  /** The first moment, updated in place. */
  m: Tensor;
  /** The second moment, updated in place. */
  v: Tensor;
}

/**
 * Records one AdamW update of a parameter (or of an arena chunk of them); `stats` is the [4] output of gradNorm
 * (clip scale, finite flag).
 */
export function adamw(batch: Batch, state: AdamwState, stats: Tensor, s: AdamwSettings): void {
  const n = state.w.size;
  for (const [name, t] of Object.entries(state)) {
    if (t.size !== n || t.dtype !== "f32") {
      throw new TypeError(`AdamW tensor ${name} must be [${n}] f32, got [${t.shape}] ${t.dtype}`);
    }
  }
  if (!Number.isInteger(s.step) || s.step < 1) {
    throw new RangeError(`AdamW step must be an integer >= 1, got ${s.step}`);
  }
  if (s.decayEnd !== undefined && (!Number.isInteger(s.decayEnd) || s.decayEnd < 0)) {
    throw new RangeError(`AdamW decayEnd must be an integer >= 0, got ${s.decayEnd}`);
  }
  const beta1 = s.beta1 ?? 0.9;
  const beta2 = s.beta2 ?? 0.999;
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, { params: PARAMS }),
    buffers: [state.w, state.g, state.m, state.v, stats],
    params: {
      n,
      lr: s.lr,
      beta1,
      beta2,
      eps: s.eps ?? 1e-8,
      weightDecay: s.weightDecay ?? 0.01,
      bc1: 1 - Math.pow(beta1, s.step),
      bc2: 1 - Math.pow(beta2, s.step),
      decayEnd: Math.min(s.decayEnd ?? n, n),
    },
    grid: foldGrid(batch.gpu, Math.ceil(n / 256)),
  });
}
