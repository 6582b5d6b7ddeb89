/**
 * Rolling a diverged step back: a copy, kept on the GPU, of everything an optimizer step changes (the trainable
 * weights, AdamW's two moments and its update count, for each optimizer given: the actor's, and the critic's with
 * PPO), refreshed after every accepted step and written back over a step that diverged, so the run skips that batch
 * and goes on from the weights before it, bit for bit. The copy costs 3 × the trainable f32 bytes of GPU memory per
 * optimizer (weights, m, v) and one buffer-to-buffer copy per step, with no readback; `trainer.max_rollbacks=0` keeps
 * none. `SpikeCheck` is the loss-spike rule that feeds the same path: a value above `factor` × the median of the last
 * accepted ones.
 */
import { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { rowParts, writeStored } from "../gpu/split.ts";
import { empty, type Tensor } from "../gpu/tensor.ts";
import type { TensorSet } from "../model/weights.ts";
import type { AdamW } from "../update/optimizer.ts";

/** The GPU tensors that hold a set's values: its arena chunks, or each tensor's row parts. */
function storage(set: TensorSet): Tensor[] {
  if (set.arena) return [...set.arena.chunks];
  return [...set.tensors.values()].flatMap((t) => rowParts(t).map((p) => p.tensor));
}

/**
 * The state of some optimizers as it was after the last accepted step, on the GPU.
 *
 * @example
 * const keep = new Snapshot(gpu, [opt]); // copies are made now
 * // ... a step that diverged ...
 * await keep.restore(); // weights, moments and opt.step as before it
 */
export class Snapshot {
  readonly #pairs: { live: Tensor; copy: Tensor }[];
  readonly #steps: number[];
  /** GPU bytes the copy holds. */
  readonly bytes: number;

  constructor(readonly gpu: Gpu, readonly opts: readonly AdamW[]) {
    const live = opts.flatMap((o) => [o.params, o.m, o.v].flatMap(storage));
    this.#pairs = live.map((t) => ({ live: t, copy: empty(gpu, t.shape, t.dtype, "rollback copy") }));
    this.bytes = this.#pairs.reduce((n, p) => n + p.copy.bytes, 0);
    this.#steps = opts.map((o) => o.step);
    this.#copy("keep");
  }

  /** Copies the current state (queued; the GPU runs it before any later step's work). */
  keep(): Promise<void> {
    this.opts.forEach((o, i) => (this.#steps[i] = o.step));
    return this.#copy("keep");
  }

  /** Writes the kept state back over the live one. */
  restore(): Promise<void> {
    this.opts.forEach((o, i) => (o.step = this.#steps[i]));
    return this.#copy("restore");
  }

  release(): void {
    for (const p of this.#pairs) p.copy.release();
  }

  #copy(way: "keep" | "restore"): Promise<void> {
    const batch = new Batch(this.gpu);
    for (const { live, copy } of this.#pairs) way === "keep" ? batch.copy(live, copy) : batch.copy(copy, live);
    return batch.submit();
  }
}

/**
 * A phase's rollbacks: up to `limit` diverged steps are undone (a `Snapshot` of `opts`), the next one is not. With
 * `limit` 0 nothing is kept and every divergence stops the run.
 */
export class Rollbacks {
  readonly #snapshot: Snapshot | undefined;
  /** Steps rolled back so far in this phase (this process). */
  count = 0;
  /** Accepted steps that changed the weights, in this phase (this process). */
  kept = 0;

  constructor(gpu: Gpu, opts: readonly AdamW[], readonly limit: number) {
    this.#snapshot = limit > 0 ? new Snapshot(gpu, opts) : undefined;
  }

  /** GPU bytes held for rolling back (0 when none is kept). */
  get bytes(): number {
    return this.#snapshot?.bytes ?? 0;
  }

  /** Keeps the state after an accepted step; one that changed nothing (`updated` false) needs no copy. */
  async accepted(updated = true): Promise<void> {
    if (!updated) return;
    this.kept++;
    await this.#snapshot?.keep();
  }

  /**
   * Why a phase that ends now has no result, or undefined: every step of it that updated the weights diverged and
   * was rolled back, so its weights are the ones it started from.
   */
  allUndone(phase: string): string | undefined {
    if (this.count === 0 || this.kept > 0) return undefined;
    return `all ${this.count} ${phase} steps that updated the weights diverged and were rolled back (trainer.` +
      `max_rollbacks=${this.limit}), so nothing was learnt`;
  }

  /** Undoes the last step and counts it; false (nothing done) when the budget is spent. */
  async undo(): Promise<boolean> {
    if (!this.#snapshot || this.count >= this.limit) return false;
    await this.#snapshot.restore();
    this.count++;
    return true;
  }

  release(): void {
    this.#snapshot?.release();
  }
}

/**
 * A loss spike: a value above `factor` × the median of the last `window` accepted values and at least `minRise` above
 * it, once `minHistory` of them are known (an early, still falling loss has no history to spike over). The rise keeps
 * a low loss's ordinary noise (0.3 over a median of 0.05) from counting. `factor` 0 turns the check off.
 */
export class SpikeCheck {
  readonly #history: number[] = [];

  constructor(
    readonly factor: number,
    readonly o: { name: string; window?: number; minHistory?: number; minRise?: number },
  ) {}

  /** Why `value` is a spike, or undefined. */
  test(value: number): string | undefined {
    const h = this.#history, min = this.o.minHistory ?? 5;
    if (this.factor <= 0 || h.length < min || !Number.isFinite(value)) return undefined;
    const sorted = [...h].sort((a, b) => a - b), mid = sorted.length >> 1;
    const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    if (!(median > 0) || value <= this.factor * median || value - median < (this.o.minRise ?? 0)) return undefined;
    return `the ${this.o.name} ${value.toPrecision(4)} is ${(value / median).toPrecision(3)} × the median ` +
      `${median.toPrecision(4)} of the last ${h.length} steps (trainer.loss_spike_factor=${this.factor})`;
  }

  /** Adds an accepted step's value to the history. */
  accept(value: number): void {
    if (!Number.isFinite(value)) return;
    this.#history.push(value);
    if (this.#history.length > (this.o.window ?? 20)) this.#history.shift();
  }
}

/** The value of a fault-injection variable, or undefined (unset, or no permission to read the environment). */
function injected(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * Test fault injection: when `CRUCIBLE_SPIKE_AT` names `point` (`sft step N`), the step's sequences come back with
 * every token id scrambled among the ids below the batch's largest (masks kept): a batch of mostly rare tokens in no
 * order, unlike anything trained on, whose loss spikes. `seqs` otherwise.
 */
export function spikeAt<T extends { ids: number[] }>(point: string, seqs: T[]): T[] {
  if (injected("CRUCIBLE_SPIKE_AT") !== point) return seqs;
  const n = Math.max(...seqs.flatMap((q) => q.ids)) + 1;
  return seqs.map((q) => ({ ...q, ids: q.ids.map((id, i) => (id * 7919 + i * 104_729 + 13) % n) }));
}

/**
 * Test fault injection: when `CRUCIBLE_DIVERGE_AT` names `point` (`sft step N`, `rl update N`), the trainable set's
 * first tensor is overwritten with NaN, as a step that blew up would leave it. Nothing happens otherwise.
 */
export function divergeAt(point: string, set: TensorSet): void {
  if (injected("CRUCIBLE_DIVERGE_AT") !== point) return;
  const first = set.stored(set.specs[0].name);
  const size = rowParts(first).reduce((n, p) => n + p.tensor.size, 0);
  writeStored(first, new Float32Array(size).fill(NaN));
}
