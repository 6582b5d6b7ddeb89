/**
 * The supervised loss as a head gradient: L = -Σ_t w_t · logp_t with host-chosen per-token weights (w = mask /
 * count gives the mean negative log-likelihood over target tokens). Linear in the weights, so micro-batches of one
 * batch add up to the same gradient however it is split.
 */
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor, zeros } from "../gpu/tensor.ts";
import type { HeadGrad } from "../model/head.ts";

/** A head gradient for weighted NLL, and the tensors it holds (release them after the batch is submitted). */
export interface NllGrad {
  /** Pass as the model's `lossGrad`. */
  grad: HeadGrad;
  /** Frees the tensors it holds; call after the batch that used them was submitted. */
  release(): void;
}

/** dlogp = -w, dentropy = 0, for per-token weights w [T]. */
export function nllGrad(gpu: Gpu, weights: ArrayLike<number>): NllGrad {
  const T = weights.length;
  const dlogp: Tensor = fromHost(gpu, Float32Array.from(weights, (w) => -w), [T]);
  const dentropy: Tensor = zeros(gpu, [T]);
  const slice = (t: Tensor, start: number, count: number) => (count === T ? t : t.view(start, [count]));
  return {
    grad: (_batch, c) => ({ dlogp: slice(dlogp, c.start, c.count), dentropy: slice(dentropy, c.start, c.count) }),
    release() {
      dlogp.release();
      dentropy.release();
    },
  };
}
