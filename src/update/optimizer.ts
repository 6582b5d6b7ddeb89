/**
 * AdamW over every tensor of a set (a model's parameters, or a LoRA adapter's): global gradient norm, clip scale and
 * the non-finite skip computed on the GPU, then one fused update per tensor, or per arena chunk where parameters,
 * gradients and moments share one arena layout (src/model/weights.ts): then the whole step is a handful of
 * dispatches instead of two per tensor. Weight decay applies where the parameter table says so (matrices). The
 * moments are f32 sets over the same table; a matrix split by rows (past the GPU's tensor limit) has its gradient
 * and moments split alike, and each row part is updated on its own.
 */
import type { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { rowParts, type StoredTensor, writeStored } from "../gpu/split.ts";
import { type Tensor, zeros } from "../gpu/tensor.ts";
import { adamw } from "../ops/adamw.ts";
import { gradNorm } from "../ops/gradnorm.ts";
import { sameLayout, TensorSet } from "../model/weights.ts";

/** AdamW hyperparameters (learning rate given per step, from the schedule). */
export interface AdamwConfig {
  /** β1, the first moment's decay. */
  beta1: number;
  /** β2, the second moment's decay. */
  beta2: number;
  /** ε added to the second moment's root. */
  eps: number;
  /** Decoupled weight decay, applied to the tensors the parameter table marks (matrices). */
  weightDecay: number;
  /** Clip the global gradient norm to this; 0 turns clipping off. */
  maxGradNorm: number;
}

/** PyTorch's AdamW defaults (weight decay 0.01) with the gradient norm clipped at 1. */
export const ADAMW_DEFAULTS: AdamwConfig = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };

/** What one step's statistics say, read back by the caller. */
export interface StepStats {
  /** The global gradient norm before clipping. */
  gradNorm: number;
  /** The factor the gradients were scaled by: min(1, maxGradNorm / norm). */
  clipScale: number;
  /** False when the gradient norm was not finite: the GPU left parameters and moments untouched. */
  applied: boolean;
}

/** The optimizer state: moments shaped like the parameters, and the count of applied updates. */
export class AdamW {
  /** First moments, f32, shaped like the parameters. */
  readonly m: TensorSet;
  /** Second moments, f32, shaped like the parameters. */
  readonly v: TensorSet;
  /** [4] f32 from gradNorm: norm, clip scale, finite flag. */
  readonly stats: Tensor;
  /** Updates applied so far (skipped steps do not count: bias correction follows applied updates). */
  step = 0;

  /** An optimizer over `params` with their gradients `grads` and zero moments. */
  constructor(
    readonly gpu: Gpu,
    readonly params: TensorSet,
    readonly grads: TensorSet,
    readonly settings: AdamwConfig = ADAMW_DEFAULTS,
    /** Which parameters it updates (and whose gradients its norm counts); default all. */
    readonly only?: (name: string) => boolean,
  ) {
    this.m = TensorSet.zeros(gpu, params.config, params.specs);
    this.v = TensorSet.zeros(gpu, params.config, params.specs);
    this.stats = zeros(gpu, [4]);
    const sets = [params, grads, this.m, this.v];
    const layout = params.arena?.layout;
    if (!only && layout && sets.every((x) => x.arena && sameLayout(x.arena.layout, layout))) {
      this.#chunks = layout.chunks.map((_, i) => {
        const [w, g, m, v] = sets.map((x) => x.arena!.chunks[i]);
        return { w, g, m, v, decayEnd: layout.decayEnd[i] };
      });
    }
  }

  /**
   * The arena chunks of parameters, gradients and moments, when all four share one layout and every parameter
   * trains: the whole step then runs per chunk. The sets never change, so this is settled once.
   */
  readonly #chunks: { w: Tensor; g: Tensor; m: Tensor; v: Tensor; decayEnd: number }[] | undefined;

  /** Records the gradient norm and the update of every parameter at learning rate `lr`. */
  record(batch: Batch, lr: number): void {
    const s = this.settings, only = this.only ?? (() => true);
    const chunks = this.#chunks;
    if (chunks) {
      // Padding between tensors is 0 in every chunk and stays 0: it adds nothing to the norm, nor moves.
      gradNorm(batch, chunks.map((c) => c.g), this.stats, s.maxGradNorm);
      for (const c of chunks) {
        adamw(batch, { w: c.w, g: c.g, m: c.m, v: c.v }, this.stats, {
          ...s,
          lr,
          step: this.step + 1,
          decayEnd: c.decayEnd,
        });
      }
      return;
    }
    const grads = [...this.grads.tensors].filter(([n]) => only(n)).flatMap(([, t]) => parts(t));
    gradNorm(batch, grads, this.stats, s.maxGradNorm);
    for (const spec of this.params.specs) {
      if (!only(spec.name)) continue;
      const name = spec.name;
      const [w, g, m, v] = [this.params, this.grads, this.m, this.v].map((set) => parts(set.stored(name)));
      if (g.length !== w.length || m.length !== w.length || v.length !== w.length) {
        throw new TypeError(
          `AdamW needs ${name}'s parameter, gradient and moments split alike, got ${w.length}, ${g.length}, ` +
            `${m.length} and ${v.length} row parts (an f16 parameter cannot be trained)`,
        );
      }
      w.forEach((wp, i) => {
        adamw(batch, { w: wp, g: g[i], m: m[i], v: v[i] }, this.stats, {
          ...s,
          lr,
          weightDecay: spec.decay ? s.weightDecay : 0,
          step: this.step + 1,
        });
      });
    }
  }

  /** Reads what the recorded step did from `stats` values read back with it, and advances the count. */
  commit(stats: ArrayLike<number>): StepStats {
    const applied = stats[2] === 1;
    if (applied) this.step++;
    return { gradNorm: stats[0], clipScale: stats[1], applied };
  }

  /** Restores moments and the update count from a checkpoint. */
  restore(m: ReadonlyMap<string, Float32Array>, v: ReadonlyMap<string, Float32Array>, step: number): void {
    for (const spec of this.params.specs) {
      const mm = m.get(spec.name), vv = v.get(spec.name);
      if (!mm || !vv) throw new SyntaxError(`Optimizer state lacks the moments of ${spec.name}`);
      writeStored(this.m.stored(spec.name), mm);
      writeStored(this.v.stored(spec.name), vv);
    }
    this.step = step;
  }

  /** Frees the moments and the statistics tensor (not the parameters or gradients). */
  release(): void {
    this.m.release();
    this.v.release();
    this.stats.release();
  }
}

function parts(t: StoredTensor): Tensor[] {
  return rowParts(t).map((p) => p.tensor);
}
