/**
 * The divergence guard of a training phase: after every step the trainable weights' L2 norm is measured on the GPU
 * (one reduction and a 16-byte readback, a sync point), and a step that leaves it non-finite, or multiplies it by
 * more than `trainer.max_norm_growth` against the step before, has diverged. A healthy update moves the weights by a
 * small fraction of their norm (AdamW's step is about lr per element), so a step that grows the norm many times over
 * is a learning rate or a loss gone wrong (actor.lr=1e6 multiplies it by ~1e5). The first norm is measured before
 * the first step, so the guard holds at the first step as at the last. A policy whose entropy climbs to the uniform
 * bound (ln V) from well below it has collapsed too (`collapsedEntropy`); one that starts there (an untrained model)
 * has not.
 */
import { Batch } from "../gpu/batch.ts";
import { rowParts } from "../gpu/split.ts";
import { zeros } from "../gpu/tensor.ts";
import { gradNorm } from "../ops/gradnorm.ts";
import { type Learner, trainable } from "../update/learner.ts";

/** The L2 norm of the learner's trainable parameters; NaN when it is not finite. A sync point (~10 ms). */
export async function weightNorm(l: Learner): Promise<number> {
  const set = trainable(l);
  const tensors = set.specs.flatMap((s) => rowParts(set.stored(s.name)).map((p) => p.tensor));
  const stats = zeros(l.gpu, [4]);
  const batch = new Batch(l.gpu);
  gradNorm(batch, tensors, stats);
  const [s] = await batch.read([stats]);
  stats.release();
  return s[2] === 1 ? s[0] : NaN;
}

/** Watches the trainable norm from step to step. */
export class DivergenceGuard {
  #last: number | undefined;
  /** The norm before the last checked step, to go back to when that step is rolled back. */
  #before: number | undefined;

  constructor(readonly learner: Learner, readonly maxGrowth: number) {}

  /** Measures the starting norm. */
  async start(): Promise<number> {
    return (this.#last = await weightNorm(this.learner));
  }

  /** Measures the norm after a step: the norm, and the reason when the step diverged (the norm is not kept then). */
  async check(): Promise<{ norm: number; diverged?: string }> {
    const norm = await weightNorm(this.learner), last = this.#last;
    this.#before = last;
    if (!Number.isFinite(norm)) return { norm, diverged: "the weights are no longer finite" };
    if (last !== undefined && last > 0 && norm > last * this.maxGrowth) {
      return {
        norm,
        diverged: `one step multiplied the weights' norm by ${(norm / last).toPrecision(3)} (${last.toPrecision(4)} ` +
          `-> ${norm.toPrecision(4)}; trainer.max_norm_growth=${this.maxGrowth})`,
      };
    }
    this.#last = norm;
    return { norm };
  }

  /** The last checked step was rolled back: its weights, and their norm, are the ones before it again. */
  rolledBack(): void {
    this.#last = this.#before;
  }
}

/**
 * Why a policy collapsed to uniform, or undefined: its entropy `now` is within 1% of ln(vocab) while the first
 * measured one, `first`, was at least 10% below it.
 */
export function collapsedEntropy(first: number, now: number, vocab: number): string | undefined {
  const bound = Math.log(vocab);
  if (!(first < 0.9 * bound) || !(now >= 0.99 * bound)) return undefined;
  return `the policy's entropy rose from ${first.toFixed(3)} to ${now.toFixed(3)}, the uniform bound ln ${vocab} = ` +
    `${bound.toFixed(3)}: it no longer prefers any token`;
}
