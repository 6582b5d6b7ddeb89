/**
 * Kernel shapes of attention and the choice among them. CPU rasterisers (lavapipe) pay about a hundred FMAs'
 * time per storage load of a subgroup, whatever the addresses (docs/kernel-timings.md): they want register blocks
 * fed by loads shared through subgroupBroadcast ("reg"). Real GPUs want workgroup-memory tiles ("tile"). "row" is
 * the plain shape, one invocation per query row (or key row) and head, kept as the fallback where neither applies.
 *
 * "lane" is one invocation per query row walking only its own keys, in registers (decoding on CPU rasterisers).
 *
 * Names: "row", "tile", "reg{BQ}x{BJ}" and "lane{BJ}" for the forward (BQ query rows per lane, BJ keys per step) and
 * "reg{BQ}x{BJ}_{BK}x{BF}" for the backward (the dq kernel as the forward; the dk/dv kernel with BK key rows per
 * lane and BF query tokens per step).
 */
import type { Gpu } from "../gpu/device.ts";
import { fixedSubgroupSize, LOOP_BUDGET } from "./wgsl.ts";

/**
 * A kernel shape by name: "row", "tile", "reg{BQ}x{BJ}" or "lane{BJ}" (forward), "reg{BQ}x{BJ}_{BK}x{BF}"
 * (backward).
 */
export type AttentionVariant = string;

/** A parsed variant. reg fields are 0 for "row" and "tile"; lane sets only bj. */
export interface AttentionShape {
  kind: "row" | "tile" | "reg" | "lane";
  /** Query rows per lane and keys per step of the forward and dq kernels. */
  bq: number;
  bj: number;
  /** Key rows per lane and query tokens per step of the dk/dv kernel (backward only). */
  bk: number;
  bf: number;
}

// The reg and lane kernels keep their worst case within LOOP_BUDGET (see regLoopSteps); the row and tile kernels,
// whose inner loops run over D, exceed it on lavapipe once a query sees more than about 65535 / (2 D + 1) keys.
export { LOOP_BUDGET };

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
  const lane = backward ? null : /^lane(\d+)$/.exec(name);
  if (lane && Number(lane[1]) >= 1 && Number(lane[1]) <= 16) {
    return { kind: "lane", bq: 0, bj: Number(lane[1]), bk: 0, bf: 0 };
  }
  const m = backward ? /^reg(\d+)x(\d+)_(\d+)x(\d+)$/.exec(name) : /^reg(\d+)x(\d+)$/.exec(name);
  const n = m ? m.slice(1).map(Number) : [];
  if (!m || n.some((x) => x < 1 || x > 16)) {
    const form = backward ? "reg{BQ}x{BJ}_{BK}x{BF}" : "reg{BQ}x{BJ} or lane{BJ}";
    throw new RangeError(`Unknown attention variant "${name}"; use "row", "tile" or ${form} with sizes 1..16`);
  }
  return { kind: "reg", bq: n[0], bj: n[1], bk: n[2] ?? 0, bf: n[3] ?? 0 };
}

/** The name of a parsed variant (inverse of {@linkcode parseVariant}). */
export function variantName(shape: AttentionShape, backward: boolean): AttentionVariant {
  if (shape.kind === "lane") return `lane${shape.bj}`;
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
  /** The longest key range of one query when known (a KV cache slot's rows); S otherwise. */
  range?: number;
  /** How many sequences (distinct range starts) the T queries belong to, when known. */
  sequences?: number;
}

/**
 * Worst-case loop iterations of one invocation of a reg or lane kernel: the forward and dq walk at most S keys (a
 * lane at most its own range, dims.range), BJ per step; dk/dv at most T query tokens, BF per step, each with an
 * inner loop over the G = H / KV heads of a group.
 */
export function regLoopSteps(shape: AttentionShape, dims: AttentionDims, backward: boolean): number {
  // A lane walks its own range alone; reg lanes walk the union of theirs, up to all S keys.
  const keys = Math.ceil((shape.kind === "lane" ? dims.range ?? dims.S : dims.S) / shape.bj) + 1;
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
  s.bj = Math.max(s.bj, Math.ceil(((s.kind === "lane" ? dims.range ?? dims.S : dims.S) + 1) / room));
  if (backward) s.bf = Math.max(s.bf, Math.ceil(((dims.T + 1) * (dims.H / dims.KV + 1)) / room));
  if (s.bj > 16 || s.bf > 16) {
    throw new RangeError(`Attention over T ${dims.T}, S ${dims.S} passes the loop budget of CPU rasterisers`);
  }
  return variantName(s, backward);
}

/**
 * Register blocks by head dimension, keeping each pipeline's first compile to a few seconds on lavapipe (it grows
 * with the square of the live registers). The table's choices and their measured times and compile times:
 * docs/kernel-timings.md (`deno task bench kernels --filter attention`).
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
 * The forward variant for this adapter and shape: on CPU rasterisers, lane1 where the queries sit in different
 * sequences (decoding: known from dims.sequences) and each kv head serves at most 2 query heads, reg otherwise
 * (small query blocks where few queries face a cache); tile on real GPUs; row where none fits. A lane loads alone
 * what reg's lanes share, so reg wins again as query heads per kv head grow (measured: docs/kernel-timings.md,
 * `deno task bench kernels --filter decode`).
 *
 * @example
 * ```ts
 * pickAttentionForward(gpu, { T: 2048, S: 2048, H: 4, KV: 2, D: 32 }); // "reg6x2" on lavapipe
 * pickAttentionForward(gpu, { T: 64, S: 179200, H: 4, KV: 4, D: 32, range: 701, sequences: 64 }); // "lane1"
 * ```
 */
export function pickAttentionForward(gpu: Gpu, dims: AttentionDims): AttentionVariant {
  const decoding = dims.T < 128 && dims.S > dims.T;
  // At most two queries per sequence on average: neighbouring lanes would walk different ranges.
  const apart = dims.sequences !== undefined && dims.T <= 2 * dims.sequences && dims.S > dims.T;
  if (gpu.software && apart && dims.D <= REG_MAX_HEAD_DIM && (dims.H / dims.KV <= 2 || !useReg(gpu, dims.D))) {
    return fitBudget("lane1", dims, false);
  }
  if (useReg(gpu, dims.D)) {
    const t = regTable(dims.D);
    return fitBudget(decoding ? t.decode : t.forward, dims, false);
  }
  return gpu.software ? "row" : "tile";
}

/** The backward variant for this adapter and shape (see {@linkcode pickAttentionForward}). */
export function pickAttentionBackward(gpu: Gpu, dims: AttentionDims): AttentionVariant {
  if (useReg(gpu, dims.D)) return fitBudget(regTable(dims.D).backward, dims, true);
  return gpu.software ? "row" : "tile";
}
