/**
 * Loss aggregation over a mini-batch (verl's agg_loss modes), written as per-token weights:
 * agg(ℓ) = Σ_i Σ_t w_{i,t} ℓ_{i,t}.
 *
 * Crucible computes the weights once over the whole mini-batch and hands each micro-batch its slice, so the loss
 * and its gradient are the same however the mini-batch is split (verl's legacy path normalises each micro-batch
 * by its own token count instead, so its loss depends on the split). The default mode is `token-mean`, the global
 * token mean.
 *
 * Shapes: B rows, row i the per-token values of sequence i (ragged allowed), each with a mask row (1 = trained).
 */
import type { Rows } from "./advantages.ts";

/** The four aggregation modes of verl, by their verl names. */
export const LOSS_AGG_MODES = [
  "token-mean",
  "seq-mean-token-sum",
  "seq-mean-token-mean",
  "seq-mean-token-sum-norm",
] as const;

/** One of {@linkcode LOSS_AGG_MODES}. */
export type LossAggMode = typeof LOSS_AGG_MODES[number];

/** Normalisers of {@linkcode aggregationWeights}; each defaults to its value over the rows given. */
export interface AggregationOptions {
  /** `seq-mean-token-sum-norm`: the constant C (verl's `loss_scale_factor`); default the longest row's length. */
  scale?: number;
  /** `token-mean`: tokens to divide by; default the mask-1 tokens of the rows given. */
  totalTokens?: number;
  /** `seq-mean-*`: sequences to divide by; default the rows given that have a mask-1 token. */
  totalSequences?: number;
}

/** Counts of a mini-batch that the weights divide by: pass them when weighting one micro-batch at a time. */
export interface AggregationTotals {
  totalTokens: number;
  totalSequences: number;
  /** The longest row (the padded response length), the default `scale`. */
  scale: number;
}

/** Mask-1 tokens, rows with at least one, and the longest row, of `masks`. */
export function aggregationTotals(masks: Rows): AggregationTotals {
  let totalTokens = 0, totalSequences = 0, scale = 0;
  for (const m of masks) {
    let n = 0;
    for (let t = 0; t < m.length; t++) if (m[t] !== 0) n++;
    totalTokens += n;
    if (n > 0) totalSequences++;
    scale = Math.max(scale, m.length);
  }
  return { totalTokens, totalSequences, scale };
}

function positive(name: string, v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new RangeError(`Loss aggregation needs ${name} > 0, got ${v}`);
  return v;
}

/**
 * Per-token weights w (rows like `masks`, 0 where the mask is 0) with agg(ℓ) = Σ w·ℓ:
 * - `token-mean`: 1 / N_tok
 * - `seq-mean-token-sum`: 1 / B (B = sequences with a mask-1 token)
 * - `seq-mean-token-mean`: 1 / (N_i · B), the original GRPO 1/|o_i| form (verl adds 1e-8 to N_i; here N_i ≥ 1)
 * - `seq-mean-token-sum-norm`: 1 / C (Dr. GRPO)
 * A mini-batch without a mask-1 token gets all-zero weights.
 *
 * @example
 * ```ts
 * aggregationWeights([[1, 1, 0], [1]], "token-mean"); // [[1/3, 1/3, 0], [1/3]]
 * aggregationWeights([[1, 1, 0], [1]], "seq-mean-token-mean"); // [[1/4, 1/4, 0], [1/2]]
 * ```
 */
export function aggregationWeights(masks: Rows, mode: LossAggMode, options: AggregationOptions = {}): number[][] {
  const own = aggregationTotals(masks);
  const N = options.totalTokens ?? own.totalTokens;
  const B = options.totalSequences ?? own.totalSequences;
  const perRow: (n: number) => number = (() => {
    switch (mode) {
      case "token-mean":
        return () => (N === 0 ? 0 : 1 / positive("totalTokens", N));
      case "seq-mean-token-sum":
        return () => (B === 0 ? 0 : 1 / positive("totalSequences", B));
      case "seq-mean-token-mean":
        return (n: number) => (B === 0 || n === 0 ? 0 : 1 / (n * positive("totalSequences", B)));
      case "seq-mean-token-sum-norm": {
        const C = options.scale ?? own.scale;
        return () => (C === 0 ? 0 : 1 / positive("scale", C));
      }
      default:
        throw new RangeError(`Unknown loss aggregation mode "${mode}"; use one of ${LOSS_AGG_MODES.join(", ")}`);
    }
  })();
  return masks.map((m) => {
    let n = 0;
    for (let t = 0; t < m.length; t++) if (m[t] !== 0) n++;
    const w = perRow(n);
    return Array.from(m, (mt) => (mt !== 0 ? w : 0));
  });
}

/**
 * The aggregated loss Σ w·ℓ with the weights of {@linkcode aggregationWeights}. Values at mask-0 positions are
 * never read into the sum (they may be NaN or garbage).
 *
 * @example
 * ```ts
 * aggregateLoss([[1, 2, 99], [4]], [[1, 1, 0], [1]], "token-mean"); // 7 / 3
 * ```
 */
export function aggregateLoss(
  losses: Rows,
  masks: Rows,
  mode: LossAggMode,
  options: AggregationOptions = {},
): number {
  if (losses.length !== masks.length) {
    throw new TypeError(`aggregateLoss: ${losses.length} loss rows but ${masks.length} mask rows`);
  }
  const weights = aggregationWeights(masks, mode, options);
  let total = 0;
  losses.forEach((row, i) => {
    if (row.length !== masks[i].length) {
      throw new TypeError(`aggregateLoss: row ${i} has ${row.length} losses but its mask has ${masks[i].length}`);
    }
    for (let t = 0; t < row.length; t++) if (weights[i][t] !== 0) total += weights[i][t] * row[t];
  });
  return total;
}
