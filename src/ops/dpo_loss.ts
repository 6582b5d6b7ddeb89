/**
 * DPO's loss on the GPU (shaders/dpo_loss.wgsl): from the per-position logp of a packed micro-batch of preference
 * pairs and each position's weight in its sequence's log-probability, every pair's loss, implicit rewards and
 * log-probabilities, and the gradient with respect to each position's logp, which the model's backward then takes as
 * its head gradient. The formula and its CPU definition live in src/rl/dpo.ts; src/update/dpo_update.ts runs it
 * between a forward without gradients and the forward-backward that trains.
 */
import source from "../../shaders/dpo_loss.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor } from "../gpu/tensor.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import { uniforms } from "../gpu/uniforms.ts";

const SHADER: Shader = { name: "dpo_loss", source };

const PARAMS = uniforms(
  [["P", "u32"], ["lossType", "u32"], ["beta", "f32"], ["labelSmoothing", "f32"], ["scale", "f32"]] as const,
);

/** The kernel's loss codes, by TRL's loss type names. */
export const DPO_LOSS_CODES: Readonly<Record<string, number>> = { sigmoid: 0, ipo: 1, hinge: 2 };

/**
 * Columns of the per-pair statistics [P, 5]: the loss, the chosen and rejected implicit rewards β(s − ref), and the
 * policy's chosen and rejected log-probabilities s.
 */
export const DPO_STATS = ["loss", "chosenReward", "rejectedReward", "chosenLogp", "rejectedLogp"] as const;

/** The loss as the kernel takes it. */
export interface DpoKernelSettings {
  /** One of DPO_LOSS_CODES. */
  lossCode: number;
  /** β. */
  beta: number;
  /** cDPO's ε (sigmoid only). */
  labelSmoothing: number;
  /** Each pair's loss gradient is multiplied by it: 1 / (pairs in the optimizer step) for their mean. */
  scale: number;
}

/** Where a pair's two sequences sit in a packed micro-batch: first position and length of each. */
export interface PairSpan {
  chosen: [start: number, length: number];
  rejected: [start: number, length: number];
}

/** Host inputs of one micro-batch, uploaded by {@linkcode uploadDpoInputs}. */
export interface DpoInputArrays {
  /** [T] each position's weight in its sequence's log-probability (0 where it does not count). */
  weights: ArrayLike<number>;
  /** One per pair; together the spans tile [0, T). */
  spans: readonly PairSpan[];
  /** [P, 2] the reference's chosen and rejected log-probabilities, pair by pair (zeros to measure the policy alone). */
  reference: ArrayLike<number>;
}

/** The uploaded inputs of {@linkcode dpoLossForward}. */
export interface DpoInputs {
  /** [T] f32. */
  weights: Tensor;
  /** [P, 4] u32. */
  spans: Tensor;
  /** [P, 2] f32. */
  reference: Tensor;
  release(): void;
}

/** Checks that the spans tile [0, T) and uploads the three inputs (three writes). */
export function uploadDpoInputs(gpu: Gpu, a: DpoInputArrays): DpoInputs {
  const T = a.weights.length, P = a.spans.length;
  if (P === 0) throw new RangeError("A DPO micro-batch needs at least one pair");
  if (a.reference.length !== 2 * P) {
    throw new TypeError(`DPO reference has ${a.reference.length} values for ${P} pairs; it needs ${2 * P}`);
  }
  const covered = new Uint8Array(T);
  const flat = a.spans.flatMap((s) => [...s.chosen, ...s.rejected]);
  for (let k = 0; k < flat.length; k += 2) {
    const [start, length] = [flat[k], flat[k + 1]];
    if (!(length > 0) || start < 0 || start + length > T) {
      throw new RangeError(`DPO span [${start}, ${start + length}) is empty or outside the ${T} positions`);
    }
    for (let t = start; t < start + length; t++) {
      if (covered[t]++) throw new RangeError(`DPO spans overlap at position ${t}`);
    }
  }
  const gap = covered.indexOf(0);
  if (gap >= 0) throw new RangeError(`DPO spans leave position ${gap} of ${T} uncovered`);
  const weights = fromHost(gpu, Float32Array.from(a.weights), [T]);
  const spans = fromHost(gpu, Uint32Array.from(flat), [P, 4], "u32");
  const reference = fromHost(gpu, Float32Array.from(a.reference), [P, 2]);
  return {
    weights,
    spans,
    reference,
    release() {
      for (const t of [weights, spans, reference]) t.release();
    },
  };
}

/** Tensors of {@linkcode dpoLossForward}. */
export interface DpoLossArgs {
  /** [T] f32, the policy's log-probabilities. */
  logp: Tensor;
  inputs: DpoInputs;
  /** [T] f32 output (written): d (scale · Σ loss) / d logp. */
  dlogp: Tensor;
  /** [P, 5] f32 output (written), columns DPO_STATS. */
  stats: Tensor;
}

/** Records the DPO loss of every pair of a packed micro-batch, its statistics and its gradient. */
export function dpoLossForward(batch: Batch, args: DpoLossArgs, k: DpoKernelSettings): void {
  const T = args.logp.size, P = args.inputs.spans.shape[0];
  const sizes: [string, Tensor, number][] = [
    ["weights", args.inputs.weights, T],
    ["reference", args.inputs.reference, 2 * P],
    ["dlogp", args.dlogp, T],
    ["stats", args.stats, P * DPO_STATS.length],
  ];
  for (const [name, t, n] of sizes) {
    if (t.size !== n) throw new TypeError(`DPO loss tensor ${name} [${t.shape}] must hold ${n} values`);
  }
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, { params: PARAMS }),
    buffers: [args.logp, args.inputs.weights, args.inputs.spans, args.inputs.reference, args.dlogp, args.stats],
    params: { P, lossType: k.lossCode, beta: k.beta, labelSmoothing: k.labelSmoothing, scale: k.scale },
    grid: foldGrid(batch.gpu, P),
  });
}
