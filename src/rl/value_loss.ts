/**
 * The critic's clipped value loss on plain arrays, with its gradient, aggregated like the policy loss (verl's
 * compute_value_loss: ½ · agg(max((V − R)², (clip(V, V_old ± c) − R)²)), the actor's aggregation mode).
 */
import type { Rows } from "./advantages.ts";
import { type AggregationOptions, aggregationWeights, type LossAggMode } from "./aggregation.ts";

/** Result of {@linkcode valueLoss}. */
export interface ValueLoss {
  /** The aggregated clipped value loss. */
  loss: number;
  /** d loss / d V per token, rows like the inputs (0 on mask-0 tokens). */
  grads: number[][];
  /** Masked mean of [clipped branch larger]: verl's vf_clipfrac. */
  clipfrac: number;
}

/**
 * The clipped value loss ½·agg(max((V − R)², (V_clip − R)²)) with V_clip = clip(V, V_old − c, V_old + c),
 * aggregated like the policy loss. `clipRange` c defaults to 0.5 (verl's `cliprange_value`).
 *
 * @example
 * ```ts
 * valueLoss([[1]], [[0]], [[2]], [[1]], "token-mean").loss; // ½·max(1, 2.25) = 1.125
 * ```
 */
export function valueLoss(
  values: Rows,
  oldValues: Rows,
  returns: Rows,
  masks: Rows,
  mode: LossAggMode,
  options: AggregationOptions & { clipRange?: number } = {},
): ValueLoss {
  const c = options.clipRange ?? 0.5;
  if (!(c >= 0)) throw new RangeError(`clipRange must be >= 0, got ${c}`);
  for (const [name, rows] of [["values", values], ["oldValues", oldValues], ["returns", returns]] as const) {
    if (rows.length !== masks.length || rows.some((r, i) => r.length !== masks[i].length)) {
      throw new TypeError(`valueLoss: ${name} rows must match the mask rows in number and length`);
    }
  }
  const weights = aggregationWeights(masks, mode, options);
  let loss = 0, clippedCount = 0, count = 0;
  const grads = masks.map((m, i) =>
    Array.from(m, (mt, t) => {
      if (mt === 0) return 0;
      const v = values[i][t], r = returns[i][t];
      const vClip = Math.min(oldValues[i][t] + c, Math.max(oldValues[i][t] - c, v));
      const a = (v - r) ** 2, b = (vClip - r) ** 2;
      count++;
      loss += weights[i][t] * 0.5 * Math.max(a, b);
      if (b > a) {
        clippedCount++;
        return 0; // the clipped branch is constant in V (V is outside the clip range)
      }
      return weights[i][t] * (v - r);
    })
  );
  return { loss, grads, clipfrac: count === 0 ? 0 : clippedCount / count };
}
