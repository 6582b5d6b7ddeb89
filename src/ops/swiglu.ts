/** SwiGLU, h = silu(gate) · up, over the fused gate/up matmul output, and its backward. */
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel } from "../gpu/pipeline.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";

const PARAMS = uniforms([["T", "u32"], ["I", "u32"]] as const);

function dims(gu: Tensor, h: Tensor): [number, number] {
  const I = h.shape[h.shape.length - 1];
  const T = h.size / I;
  if (gu.size !== 2 * T * I) {
    throw new TypeError(`SwiGLU input [${gu.shape}] must be [${T}, ${2 * I}] for h [${h.shape}]`);
  }
  return [T, I];
}

/** Records h [T, I] = silu(gu[:, :I]) · gu[:, I:]. */
export function swigluForward(batch: Batch, gu: Tensor, h: Tensor): void {
  const [T, I] = dims(gu, h);
  batch.dispatch({
    kernel: kernel(batch.gpu, "swiglu_forward", { params: PARAMS }),
    buffers: [gu, h],
    params: { T, I },
    grid: foldGrid(batch.gpu, Math.ceil((T * I) / 64)),
  });
}

/** Records dgu [T, 2I] (=) from dh [T, I] and the forward input gu. */
export function swigluBackward(batch: Batch, gu: Tensor, dh: Tensor, dgu: Tensor): void {
  const [T, I] = dims(gu, dh);
  if (dgu.size !== gu.size) throw new TypeError(`SwiGLU gradient [${dgu.shape}] must match [${gu.shape}]`);
  batch.dispatch({
    kernel: kernel(batch.gpu, "swiglu_backward", { params: PARAMS }),
    buffers: [gu, dh, dgu],
    params: { T, I },
    grid: foldGrid(batch.gpu, Math.ceil((T * I) / 64)),
  });
}
