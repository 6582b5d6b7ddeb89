/**
 * Fused log-softmax: per-row log-probability of a given target, entropy and log-sum-exp in one pass over the
 * vocabulary, and the backward written over the logits. Temperature scales the logits first (sampling used it).
 */
import forwardSource from "../../shaders/logprob_entropy_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/logprob_entropy_backward.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import { powerOfTwoWorkgroup } from "./wgsl.ts";

const FORWARD_SHADER: Shader = { name: "logprob_entropy_forward", source: forwardSource };
const BACKWARD_SHADER: Shader = { name: "logprob_entropy_backward", source: backwardSource };

const PARAMS = uniforms([["N", "u32"], ["V", "u32"], ["invTemperature", "f32"]] as const);

/** Arguments of {@linkcode logprobForward}. Rows N, vocabulary V. */
export interface LogprobForwardArgs {
  /** [N, V] f32. */
  logits: Tensor;
  /** [N] u32 target ids. */
  target: Tensor;
  /** [N] f32 outputs. */
  logp: Tensor;
  /** [N] f32 output: the entropy of each row's softmax(logits / temperature). */
  entropy: Tensor;
  /** [N] f32 output: each row's log-sum-exp of logits / temperature, which the backward reads. */
  lse: Tensor;
  /** The logits are divided by it (default 1). */
  temperature?: number;
  /** Invocations per row, a power of two from 2 to 256; defaults to {@linkcode pickLogprobWorkgroup}'s. */
  workgroup?: number;
}

/**
 * Invocations per row of the forward: 256 on real GPUs; on CPU rasterisers, where every barrier of the row's
 * reduction switches between all of a workgroup's invocations, 16 while that leaves an invocation at most 1,024
 * logits to sum (its f32 sums' error grows with their count), else 256. Measured with `deno task bench kernels
 * --filter logprob_entropy_forward`: docs/kernel-timings.md.
 */
export function pickLogprobWorkgroup(gpu: Gpu, V: number): number {
  return gpu.software && V <= 1024 * 16 ? 16 : 256;
}

/** Arguments of {@linkcode logprobBackward}: the forward's tensors plus upstream gradients [N]. */
export interface LogprobBackwardArgs {
  /** [N, V] f32 logits, overwritten with their gradient. */
  logits: Tensor;
  /** [N] u32 target ids, as the forward's. */
  target: Tensor;
  /** [N] f32 log-sum-exp from the forward. */
  lse: Tensor;
  /** [N] f32 entropy from the forward. */
  entropy: Tensor;
  /** [N] f32 d loss / d logp. */
  dlogp: Tensor;
  /** [N] f32 d loss / d entropy. */
  dentropy: Tensor;
  /** The forward's temperature (default 1). */
  temperature?: number;
}

function shape(logits: Tensor, perRow: Tensor[]): [number, number] {
  if (logits.shape.length < 2) throw new TypeError(`Logits must be [N, V], got [${logits.shape}]`);
  const V = logits.shape[logits.shape.length - 1];
  const N = logits.size / V;
  for (const t of perRow) {
    if (t.size !== N) {
      throw new TypeError(`Per-row tensor [${t.shape}] must have ${N} elements for logits [${logits.shape}]`);
    }
  }
  return [N, V];
}

function inverse(temperature = 1): number {
  if (!(temperature > 0)) throw new RangeError(`Temperature must be > 0 for log-probabilities, got ${temperature}`);
  return 1 / temperature;
}

/** Records logp, entropy and lse of each row of logits / temperature. */
export function logprobForward(batch: Batch, args: LogprobForwardArgs): void {
  const [N, V] = shape(args.logits, [args.target, args.logp, args.entropy, args.lse]);
  const wg = powerOfTwoWorkgroup("Log-softmax", args.workgroup ?? pickLogprobWorkgroup(batch.gpu, V));
  batch.dispatch({
    kernel: kernel(batch.gpu, FORWARD_SHADER, { params: PARAMS, template: { WG: wg } }),
    buffers: [args.logits, args.target, args.logp, args.entropy, args.lse],
    params: { N, V, invTemperature: inverse(args.temperature) },
    grid: foldGrid(batch.gpu, N),
  });
}

/** Records dlogits (written over `logits`) from dlogp and dentropy. */
export function logprobBackward(batch: Batch, args: LogprobBackwardArgs): void {
  const [N, V] = shape(args.logits, [args.target, args.lse, args.entropy, args.dlogp, args.dentropy]);
  batch.dispatch({
    kernel: kernel(batch.gpu, BACKWARD_SHADER, { params: PARAMS }),
    buffers: [args.logits, args.target, args.lse, args.entropy, args.dlogp, args.dentropy],
    params: { N, V, invTemperature: inverse(args.temperature) },
    grid: foldGrid(batch.gpu, N),
  });
}
