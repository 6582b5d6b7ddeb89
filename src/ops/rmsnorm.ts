/**
 * RMSNorm (Qwen2: f32 statistics, weight applied after normalising), optionally fused with the residual add
 * that precedes it, and its backward into the input and the weight.
 */
import forwardSource from "../../shaders/rmsnorm_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/rmsnorm_backward.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import { powerOfTwoWorkgroup } from "./wgsl.ts";

const FORWARD_SHADER: Shader = { name: "rmsnorm_forward", source: forwardSource };
const BACKWARD_SHADER: Shader = { name: "rmsnorm_backward", source: backwardSource };

const FORWARD = uniforms([["T", "u32"], ["C", "u32"], ["eps", "f32"]] as const);
const BACKWARD = uniforms([["T", "u32"], ["C", "u32"], ["beta", "f32"], ["betaW", "f32"]] as const);

/** Arguments of {@linkcode rmsnormForward}. All [T, C] f32 except w [C] and rstd [T]. */
export interface RmsnormForwardArgs {
  /** [T, C] f32 input. */
  x: Tensor;
  /** [C] f32 or f16 weight. */
  w: Tensor;
  /** [T, C] f32 output: x / rms(x) · w. */
  y: Tensor;
  /** [T] f32 output: 1 / rms of each row, for the backward. */
  rstd: Tensor;
  /** Added to the mean square before the root. */
  eps: number;
  /** When given, the norm is taken of x + add, which is also written to `sum`. */
  add?: Tensor;
  /** [T, C] f32 output x + add, when `add` is given. */
  sum?: Tensor;
  /** Invocations per row, a power of two from 2 to 256; defaults to the adapter's pick. */
  workgroup?: number;
}

/** Arguments of {@linkcode rmsnormBackward}. */
export interface RmsnormBackwardArgs {
  /** [T, C] f32 gradient of the output. */
  dy: Tensor;
  /** The forward's input to the norm: x, or the fused sum x + a. */
  r: Tensor;
  /** [C] the forward's weight. */
  w: Tensor;
  /** [T] the forward's 1 / rms. */
  rstd: Tensor;
  /** Gradient of the input [T, C]; with beta 1 the norm's share is added to what it holds. */
  dr: Tensor;
  /** 0 overwrites dr (default), 1 adds to it. */
  beta?: number;
  /** Gradient of the weight [C]; skipped when absent. With betaW 1 it accumulates. */
  dw?: Tensor;
  /** 0 overwrites dw (default), 1 adds to it. */
  betaW?: number;
  /** Invocations per row of the dr pass, as the forward's. */
  workgroup?: number;
}

/**
 * Invocations per row: 8 on CPU rasterisers (every barrier of the row's reduction switches between all of a
 * workgroup's invocations there), 64 on real GPUs. Measured with `deno task bench kernels --filter rmsnorm`:
 * docs/kernel-timings.md.
 */
export function pickRmsnormWorkgroup(gpu: Gpu): number {
  return gpu.software ? 8 : 64;
}

function rows(x: Tensor, w: Tensor): [number, number] {
  const C = w.size;
  if (x.size % C !== 0) throw new TypeError(`RMSNorm input [${x.shape}] does not match weight [${w.shape}]`);
  return [x.size / C, C];
}

function same(what: string, a: Tensor, b: Tensor): void {
  if (a.size !== b.size) throw new TypeError(`RMSNorm ${what} [${b.shape}] must match the input [${a.shape}]`);
}

/** Records y = rmsnorm(x [+ add]) · w, saving rstd per row. */
export function rmsnormForward(batch: Batch, args: RmsnormForwardArgs): void {
  const [T, C] = rows(args.x, args.w);
  same("output", args.x, args.y);
  if (args.rstd.size !== T) throw new TypeError(`RMSNorm rstd must have ${T} rows, got [${args.rstd.shape}]`);
  const fused = args.add !== undefined;
  if (fused !== (args.sum !== undefined)) throw new TypeError("RMSNorm needs both `add` and `sum`, or neither");
  if (fused) {
    same("add", args.x, args.add!);
    same("sum", args.x, args.sum!);
  }
  batch.dispatch({
    kernel: kernel(batch.gpu, FORWARD_SHADER, {
      params: FORWARD,
      entryPoint: fused ? "main_add" : "main",
      template: { WG: powerOfTwoWorkgroup("RMSNorm", args.workgroup ?? pickRmsnormWorkgroup(batch.gpu)) },
    }),
    buffers: [args.x, args.w, args.y, args.rstd, args.add, args.sum],
    params: { T, C, eps: args.eps },
    grid: foldGrid(batch.gpu, T),
  });
}

/** Records dr (=, or += with beta 1) and dw (=, or += with betaW 1) of y = rmsnorm(r) · w. */
export function rmsnormBackward(batch: Batch, args: RmsnormBackwardArgs): void {
  const [T, C] = rows(args.r, args.w);
  same("gradient", args.r, args.dy);
  same("input gradient", args.r, args.dr);
  const params = { T, C, beta: args.beta ?? 0, betaW: args.betaW ?? 0 };
  const common = [args.dy, args.r, args.w, args.rstd] as const;
  if (args.dw) {
    batch.dispatch({
      kernel: kernel(batch.gpu, BACKWARD_SHADER, { params: BACKWARD, entryPoint: "main_dw", template: { WG: 64 } }),
      buffers: [...common, undefined, args.dw],
      params,
      grid: [Math.ceil(C / 64)],
    });
  }
  batch.dispatch({
    kernel: kernel(batch.gpu, BACKWARD_SHADER, {
      params: BACKWARD,
      entryPoint: "main",
      template: { WG: powerOfTwoWorkgroup("RMSNorm", args.workgroup ?? pickRmsnormWorkgroup(batch.gpu)) },
    }),
    buffers: [...common, args.dr],
    params,
    grid: foldGrid(batch.gpu, T),
  });
}
