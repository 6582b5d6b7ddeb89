/**
 * Kernel shapes of attention and the choice among them. CPU rasterisers (lavapipe) pay about 70 ns per storage load
 * of a subgroup, whatever the addresses, and well under 1 ns per FMA: they want register blocks fed by loads shared
 * through subgroupBroadcast ("reg"). Real GPUs want workgroup-memory tiles ("tile"). "row" is the plain shape, one
 * invocation per query row (or key row) and head, kept as the fallback where neither applies.
 *
 * Names: "row", "tile", "reg{BQ}x{BJ}" for the forward (BQ query rows per lane, BJ keys per step) and
 * "reg{BQ}x{BJ}_{BK}x{BF}" for the backward (the dq kernel as the forward; the dk/dv kernel with BK key rows per
 * lane and BF query tokens per step).
 */
import type { Gpu } from "../gpu/device.ts";
import { fixedSubgroupSize } from "./wgsl.ts";

/** A kernel shape by name: "row", "tile", "reg{BQ}x{BJ}" (forward) or "reg{BQ}x{BJ}_{BK}x{BF}" (backward). */
export type AttentionVariant = string;

/** A parsed variant. reg fields are 0 for "row" and "tile". */
export interface AttentionShape {
  kind: "row" | "tile" | "reg";
  /** Query rows per lane and keys per step of the forward and dq kernels. */
  bq: number;
  bj: number;
  /** Key rows per lane and query tokens per step of the dk/dv kernel (backward only). */
  bk: number;
  bf: number;
}

/**
 * llvmpipe stops every loop of an invocation once that invocation has run 65535 loop iterations in all, over all
 * its loops (LP_MAX_TGSI_LOOP_ITERATIONS, one counter per invocation): past it, results are silently wrong. The
 * reg kernels keep their worst case below this (see {@linkcode regLoopSteps}); the row and tile kernels, whose
 * inner loops run over D, exceed it on lavapipe once a query sees more than about 65535 / (2 D + 1) keys.
 */
export const LOOP_BUDGET = 65535;

/** Largest head dimension of the reg kernels: their register blocks grow with D (compile time with their square). */
export const REG_MAX_HEAD_DIM = 128;

/**
 * The variants worth timing for head dimension D: row, tile, and reg blocks around the table's pick whose first
 * compile stays within seconds on lavapipe (none past {@linkcode REG_MAX_HEAD_DIM}).
 */
export function attentionVariants(D: number, backward: boolean): AttentionVariant[] {
  const reg = D > REG_MAX_HEAD_DIM
    ? []
    : backward
    ? D <= 32
      ? ["reg1x1_1x1", "reg2x4_2x2", "reg3x2_3x1", "reg4x2_4x2"]
      : D <= 64
      ? ["reg1x1_1x1", "reg1x2_1x2", "reg2x2_1x2"]
      : ["reg1x1_1x1", "reg1x1_1x2"]
    : D <= 32
    ? ["reg1x2", "reg3x2", "reg4x4", "reg6x2", "reg8x2"]
    : D <= 64
    ? ["reg1x2", "reg2x2", "reg3x2"]
    : ["reg1x2", "reg1x4"];
  return ["row", "tile", ...reg];
}

/** Parses a variant name; `backward` selects the two-block form of reg. Throws a RangeError on a bad name. */
export function parseVariant(name: AttentionVariant, backward: boolean): AttentionShape {
  if (name === "row" || name === "tile") return { kind: name, bq: 0, bj: 0, bk: 0, bf: 0 };
  const m = backward ? /^reg(\d+)x(\d+)_(\d+)x(\d+)$/.exec(name) : /^reg(\d+)x(\d+)$/.exec(name);
  const n = m ? m.slice(1).map(Number) : [];
  if (!m || n.some((x) => x < 1 || x > 16)) {
    const form = backward ? "reg{BQ}x{BJ}_{BK}x{BF}" : "reg{BQ}x{BJ}";
    throw new RangeError(`Unknown attention variant "${name}"; use "row", "tile" or ${form} with sizes 1..16`);
  }
  return { kind: "reg", bq: n[0], bj: n[1], bk: n[2] ?? 0, bf: n[3] ?? 0 };
}

/** The name of a parsed variant (inverse of {@linkcode parseVariant}). */
export function variantName(shape: AttentionShape, backward: boolean): AttentionVariant {
  if (shape.kind !== "reg") return shape.kind;
  return backward ? `reg${shape.bq}x${shape.bj}_${shape.bk}x${shape.bf}` : `reg${shape.bq}x${shape.bj}`;
}

/** The sizes a variant is chosen for. */
export interface AttentionDims {
  /** Query rows (tokens). */
  T: number;
  /** Key rows (S = T in training; the whole cache in decoding). */
  S: number;
  H: number;
  KV: number;
  D: number;
}

/**
 * Worst-case loop iterations of one invocation of a reg kernel: the forward and dq walk at most S keys, BJ per
 * step; dk/dv at most T query tokens, BF per step, each with an inner loop over the G = H / KV heads of a group.
 */
export function regLoopSteps(shape: AttentionShape, dims: AttentionDims, backward: boolean): number {
  const keys = Math.ceil(dims.S / shape.bj) + 1;
  if (!backward) return keys;
  return Math.max(keys, (Math.ceil(dims.T / shape.bf) + 1) * (dims.H / dims.KV + 1));
}

/**
 * `name` with BJ (and BF) raised as far as needed to keep {@linkcode regLoopSteps} within the budget; a RangeError
 * past 16 (more than a million keys).
 */
function fitBudget(name: string, dims: AttentionDims, backward: boolean): string {
  const s = parseVariant(name, backward);
  const room = LOOP_BUDGET - 64;
  s.bj = Math.max(s.bj, Math.ceil((dims.S + 1) / room));
  if (backward) s.bf = Math.max(s.bf, Math.ceil(((dims.T + 1) * (dims.H / dims.KV + 1)) / room));
  if (s.bj > 16 || s.bf > 16) {
    throw new RangeError(`Attention over T ${dims.T}, S ${dims.S} passes the loop budget of CPU rasterisers`);
  }
  return variantName(s, backward);
}

/**
 * Register blocks by head dimension, keeping each pipeline's first compile to a few seconds on lavapipe (it grows
 * with the square of the live registers: about 1.8 s for 256 of them, 5.5 s for 512). `deno task bench kernels
 * --filter attention` on lavapipe (2 cores shared with other jobs; CPU ms per call, first compile with Mesa's cache
 * off):
 *   fwd 8 x 256 H 4/2 D 32     row 271, reg1x2 39, reg3x2 20, reg4x4 14.6 (2.3 s), reg6x2 14.3 (2.6 s),
 *                              reg8x2 12.8 (4.2 s)
 *   bwd 8 x 256 H 4/2 D 32     row 997, reg1x1_1x1 102, reg2x4_2x2 66, reg3x2_3x1 57 (2.6 + 2.6 s),
 *                              reg4x2_4x2 49 (6 + 6 s)
 *   fwd 4 x 128 H 14/2 D 64    row 262, reg1x2 36, reg2x2 24, reg3x2 20 (3.3 s)
 *   bwd 4 x 128 H 14/2 D 64    row 783, reg1x1_1x1 89, reg1x2_1x2 91 (1.9 + 1.8 s), reg2x2_1x2 77 (5 + 1.8 s)
 *   decode 32 x 1 of 300 rows  row 11.4, reg1x2 6.9, reg3x2 9.3, reg6x2 11.2
 * D 128: reg1x2 forward 2.1 s; reg1x1_1x1 backward 5.5 + 5.9 s, the smallest block there is.
 */
function regTable(D: number): { forward: string; decode: string; backward: string } {
  if (D <= 32) return { forward: "reg6x2", decode: "reg1x2", backward: "reg3x2_3x1" };
  if (D <= 64) return { forward: "reg3x2", decode: "reg1x2", backward: "reg1x2_1x2" };
  return { forward: "reg1x2", decode: "reg1x2", backward: "reg1x1_1x1" };
}

/**
 * Whether the reg kernels serve this adapter and head dimension: their workgroup is one subgroup of a fixed size,
 * whose lanes share loads through subgroupBroadcast.
 */
function useReg(gpu: Gpu, D: number): boolean {
  return gpu.software && fixedSubgroupSize(gpu) > 0 && D <= REG_MAX_HEAD_DIM;
}

/**
 * The forward variant for this adapter and shape: reg on CPU rasterisers (small query blocks when few queries
 * face a cache: their lanes sit in different sequences), tile on real GPUs, row where neither fits.
 *
 * @example
 * ```ts
 * pickAttentionForward(gpu, { T: 2048, S: 2048, H: 4, KV: 2, D: 32 }); // "reg6x2" on lavapipe
 * ```
 */
export function pickAttentionForward(gpu: Gpu, dims: AttentionDims): AttentionVariant {
  if (useReg(gpu, dims.D)) {
    const t = regTable(dims.D);
    return fitBudget(dims.T < 128 && dims.S > dims.T ? t.decode : t.forward, dims, false);
  }
  return gpu.software ? "row" : "tile";
}

/** The backward variant for this adapter and shape (see {@linkcode pickAttentionForward}). */
export function pickAttentionBackward(gpu: Gpu, dims: AttentionDims): AttentionVariant {
  if (useReg(gpu, dims.D)) return fitBudget(regTable(dims.D).backward, dims, true);
  return gpu.software ? "row" : "tile";
}
