/** SwiGLU, h = silu(gate) · up, elementwise over the gate and up projections, and its backward. */
import forwardSource from "../../shaders/swiglu_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/swiglu_backward.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";

const FORWARD_SHADER: Shader = { name: "swiglu_forward", source: forwardSource };
const BACKWARD_SHADER: Shader = { name: "swiglu_backward", source: backwardSource };

const PARAMS = uniforms([["n", "u32"]] as const);

function sameSize(...ts: Tensor[]): number {
  const n = ts[0].size;
  for (const t of ts) {
    if (t.size !== n || t.dtype !== "f32") {
      throw new TypeError(`SwiGLU tensors must all be [${ts[0].shape}] f32, got [${t.shape}]`);
    }
  }
  return n;
}

/** Records h = silu(g) · u, all [T, I]. */
export function swigluForward(batch: Batch, g: Tensor, u: Tensor, h: Tensor): void {
  const n = sameSize(g, u, h);
  batch.dispatch({
    kernel: kernel(batch.gpu, FORWARD_SHADER, { params: PARAMS }),
    buffers: [g, u, h],
    params: { n },
    grid: foldGrid(batch.gpu, Math.ceil(n / 64)),
  });
}

/** Records dg and du (=) from dh and the forward inputs g and u. */
export function swigluBackward(batch: Batch, g: Tensor, u: Tensor, dh: Tensor, dg: Tensor, du: Tensor): void {
  const n = sameSize(g, u, dh, dg, du);
  batch.dispatch({
    kernel: kernel(batch.gpu, BACKWARD_SHADER, { params: PARAMS }),
    buffers: [g, u, dh, dg, du],
    params: { n },
    grid: foldGrid(batch.gpu, Math.ceil(n / 64)),
  });
}
