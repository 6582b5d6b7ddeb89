/**
 * Rotary position embedding, Qwen's split-halves form, applied in place to the first `heads` heads of each token
 * (e.g. the q and k parts of a fused QKV row [H + 2·KV, D]). Tables come from the host in f64, rounded once.
 */
import source from "../../shaders/rope.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import { fromHost, type Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";

const SHADER: Shader = { name: "rope", source };

const PARAMS = uniforms(
  [["T", "u32"], ["heads", "u32"], ["stride", "u32"], ["D", "u32"], ["direction", "f32"]] as const,
);

/** cos and sin of pos · θ^(-2i/D) for pos < positions, i < D/2: [positions, D/2] each, on the GPU. */
export interface RopeTable {
  /** [positions, D/2] f32 cosines. */
  cos: Tensor;
  /** [positions, D/2] f32 sines. */
  sin: Tensor;
  /** Positions the table covers. */
  positions: number;
  /** D, the head dimension. */
  headDim: number;
}

/** Plain RoPE's inverse frequencies θ^(-2i/D) for i < D/2, f64. */
export function ropeInvFreq(theta: number, headDim: number): number[] {
  if (headDim % 2 !== 0) throw new RangeError(`RoPE needs an even head dimension, got ${headDim}`);
  return Array.from({ length: headDim / 2 }, (_, i) => 1 / Math.pow(theta, (2 * i) / headDim));
}

/** The angles' cos and sin on the host, f64: [positions · D/2] each. */
export function ropeAngles(
  theta: number,
  headDim: number,
  positions: number,
): { cos: Float64Array; sin: Float64Array } {
  return anglesOf(ropeInvFreq(theta, headDim), positions);
}

/** cos and sin of t · invFreq[i] for t < positions: [positions · invFreq.length] each, f64. */
function anglesOf(invFreq: readonly number[], positions: number): { cos: Float64Array; sin: Float64Array } {
  const half = invFreq.length;
  const cos = new Float64Array(positions * half);
  const sin = new Float64Array(positions * half);
  for (let i = 0; i < half; i++) {
    for (let t = 0; t < positions; t++) {
      cos[t * half + i] = Math.cos(t * invFreq[i]);
      sin[t * half + i] = Math.sin(t * invFreq[i]);
    }
  }
  return { cos, sin };
}

/** Uploads plain RoPE's tables for positions [0, positions). */
export function ropeTable(gpu: Gpu, theta: number, headDim: number, positions: number): RopeTable {
  return ropeTableOf(gpu, ropeInvFreq(theta, headDim), positions);
}

/** Uploads the tables of any inverse frequencies [D/2] (a model's plan decides them) for positions [0, positions). */
export function ropeTableOf(gpu: Gpu, invFreq: readonly number[], positions: number): RopeTable {
  const { cos, sin } = anglesOf(invFreq, positions);
  const shape = [positions, invFreq.length];
  return { cos: fromHost(gpu, cos, shape), sin: fromHost(gpu, sin, shape), positions, headDim: 2 * invFreq.length };
}

/** Arguments of {@linkcode ropeForward} and {@linkcode ropeBackward}. */
export interface RopeArgs {
  /** [T, stride, D] f32, rotated in place. */
  x: Tensor;
  /** [T] u32 positions, each < table.positions. */
  pos: Tensor;
  /** The cos and sin table (ropeTable). */
  table: RopeTable;
  /** Heads rotated per token (the first ones). */
  heads: number;
  /** Heads stored per token; defaults to `heads`. */
  stride?: number;
}

function rope(batch: Batch, args: RopeArgs, direction: number): void {
  const D = args.table.headDim;
  const stride = args.stride ?? args.heads;
  const T = args.pos.size;
  if (args.x.size !== T * stride * D) {
    throw new TypeError(`RoPE input [${args.x.shape}] is not [${T}, ${stride}, ${D}]`);
  }
  if (args.heads > stride) throw new RangeError(`RoPE rotates ${args.heads} heads of rows holding only ${stride}`);
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, { params: PARAMS }),
    buffers: [args.x, args.pos, args.table.cos, args.table.sin],
    params: { T, heads: args.heads, stride, D, direction },
    grid: foldGrid(batch.gpu, Math.ceil((T * args.heads * D) / 2 / 64)),
  });
}

/** Records the rotation of q or k in place. */
export function ropeForward(batch: Batch, args: RopeArgs): void {
  rope(batch, args, 1);
}

/** Records the gradient's rotation back (by −angle) in place. */
export function ropeBackward(batch: Batch, args: RopeArgs): void {
  rope(batch, args, -1);
}
