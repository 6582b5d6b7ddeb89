/**
 * Float64 reference of the fused DPO loss (shaders/dpo_loss.wgsl): each sequence's log-probability as a weighted sum
 * of its positions' logp, then the pair's loss and rewards from src/rl/dpo.ts's dpoLoss, and the gradient of
 * scale · Σ loss with respect to every position's logp from dpoLogitGrad (checkOp checks it by finite differences).
 */
import { dpoLogitGrad, dpoLoss, type DpoOptions } from "../../src/rl/dpo.ts";

/** A micro-batch as the kernel sees it: spans [P, 4] (chosen start, length, rejected start, length), reference [P, 2]. */
export interface DpoRefInputs {
  logp: ArrayLike<number>;
  weights: ArrayLike<number>;
  spans: ArrayLike<number>;
  reference: ArrayLike<number>;
}

/** Σ w · logp over a span, skipping positions of weight 0 (their logp may be garbage). */
function spanSum(x: DpoRefInputs, start: number, length: number): number {
  let s = 0;
  for (let t = start; t < start + length; t++) if (x.weights[t] !== 0) s += x.weights[t] * x.logp[t];
  return s;
}

/** Stats [P, 5] (loss, chosen reward, rejected reward, chosen logp, rejected logp) and dlogp [T]. */
export function dpoLossRef(x: DpoRefInputs, o: DpoOptions & { scale: number }) {
  const P = x.spans.length / 4;
  const s = (p: number, side: 0 | 1) => spanSum(x, x.spans[4 * p + 2 * side], x.spans[4 * p + 2 * side + 1]);
  const pairs = {
    chosen: Array.from({ length: P }, (_, p) => s(p, 0)),
    rejected: Array.from({ length: P }, (_, p) => s(p, 1)),
    refChosen: Array.from({ length: P }, (_, p) => x.reference[2 * p]),
    refRejected: Array.from({ length: P }, (_, p) => x.reference[2 * p + 1]),
  };
  const r = dpoLoss(pairs, o), g = dpoLogitGrad(pairs, o);
  const stats = new Float64Array(P * 5), dlogp = new Float64Array(x.logp.length);
  for (let p = 0; p < P; p++) {
    stats.set([r.losses[p], r.chosenRewards[p], r.rejectedRewards[p], pairs.chosen[p], pairs.rejected[p]], 5 * p);
    for (const side of [0, 1]) {
      const [start, length] = [x.spans[4 * p + 2 * side], x.spans[4 * p + 2 * side + 1]];
      const sign = side === 0 ? 1 : -1;
      for (let t = start; t < start + length; t++) {
        dlogp[t] = x.weights[t] === 0 ? 0 : sign * o.scale * g[p] * x.weights[t];
      }
    }
  }
  return {
    stats,
    dlogp,
    logits: pairs.chosen.map((c, p) => c - pairs.rejected[p] - (pairs.refChosen[p] - pairs.refRejected[p])),
  };
}
