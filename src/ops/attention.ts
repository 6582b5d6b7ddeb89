/**
 * Grouped-query attention with per-query key ranges (causal, packed sequences, KV-cache slots), forward and
 * backward, plus the host helpers that build the ranges.
 *
 * Query row t, head h attends to key rows kvStart[t] <= j < kvEnd[t] of kv head h / (H / KV):
 *   forward   o = softmax(scale · q kᵀ) v, lse = log Σ exp(scale · q kᵀ)   (online softmax, scores never stored)
 *   backward  dq, dk, dv from q, k, v, o, lse, dO (P recomputed; dk, dv summed over the query heads of a group)
 * In training S = T and row t of k, v is token t of the packed batch. In KV-cached decoding k, v are the cache,
 * where slot s owns rows [s · maxLen, (s + 1) · maxLen). The ranges come from {@linkcode packedCausalRanges} and
 * {@linkcode cacheRanges}.
 *
 * Kernel shapes (attention_variants.ts chooses per adapter and shape; on GPUs the autotuner, attention_tune.ts,
 * times them per shape): "reg" register blocks for CPU rasterisers, "tile" workgroup-memory tiles for real GPUs,
 * "row" one invocation per row and head; plus a split over keys for few queries on real GPUs. Every output row has one owner summing in a fixed order: deterministic, no atomics.
 *
 * Their measured times on lavapipe: docs/kernel-timings.md (`deno task bench kernels --filter attention`).
 */
import forwardSource from "../../shaders/attention_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/attention_backward.wgsl" with { type: "text" };
import commonSource from "../../shaders/attention_common.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { cachedKernel, type Kernel, kernel, type Shader } from "../gpu/pipeline.ts";
import { textHash } from "../gpu/tuner.ts";
import { empty, type Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import type { RangeFacts } from "./attention_ranges.ts";
import { dkvRegSlots, dqRegSlots, forwardLaneSlots, forwardRegSlots } from "./attention_reg.ts";
import {
  type AttentionDims,
  type AttentionShape,
  type AttentionVariant,
  LOOP_BUDGET,
  parseVariant,
  pickAttentionBackward,
  pickAttentionForward,
  regLoopSteps,
  variantName,
} from "./attention_variants.ts";
import { fixedSubgroupSize, laneSlots, withPieces } from "./wgsl.ts";
import {
  type AttentionJobTensors,
  forwardChoice,
  forwardChoiceName,
  type ForwardPick,
  tunedAttention,
} from "./attention_tune.ts";

export { type AttentionRanges, cacheRanges, packedCausalRanges, rangeFacts } from "./attention_ranges.ts";
export type { AttentionVariant } from "./attention_variants.ts";

// Both shaders share the pieces of attention_common.wgsl (block range, tiles, the query-row register walk).
const FORWARD_SHADER: Shader = {
  name: "attention_forward",
  source: withPieces(forwardSource, { ATTENTION_COMMON: commonSource }),
};
const BACKWARD_SHADER: Shader = {
  name: "attention_backward",
  source: withPieces(backwardSource, { ATTENTION_COMMON: commonSource }),
};
/** The autotuner's prefix of attention keys: the shaders' hash, so a change to them times the shapes again. */
export const ATTENTION_TUNE_PREFIX: string = `attention@${textHash(FORWARD_SHADER.source + BACKWARD_SHADER.source)}`;

/** Params of both shaders (declared once, in attention_common.wgsl); the backward leaves splits at 1. */
const PARAMS = uniforms(
  [["T", "u32"], ["H", "u32"], ["KV", "u32"], ["S", "u32"], ["scale", "f32"], ["splits", "u32"]] as const,
);

/** Invocations per workgroup of the row, tile and split kernels (one invocation per row and head). */
const WG = 64;
/** Most rows (keys, or query-head pairs) in one tile of the tiled kernels. */
const MAX_TILE = 32;
/** Largest head dimension: q and the output accumulator live in D-sized register arrays. */
export const MAX_HEAD_DIM = 256;

/** Arguments of {@linkcode attentionForward}. */
export interface AttentionForwardArgs {
  /** [T, H, D] f32, already rotated by RoPE. */
  q: Tensor;
  /** [S, KV, D] f32, or f16 (a KV cache). */
  k: Tensor;
  /** [S, KV, D], same dtype as k. */
  v: Tensor;
  /** [T] u32: first key row of each query. */
  kvStart: Tensor;
  /** [T] u32: one past the last key row of each query; kvStart == kvEnd marks a padding query. */
  kvEnd: Tensor;
  /** Output [T, H, D] f32, written; 0 for padding queries. */
  o: Tensor;
  /** Output [T, H] f32, written: log-sum-exp of the scaled scores, for the backward; 0 for padding queries. */
  lse: Tensor;
  /** Score scale; defaults to 1 / sqrt(D). */
  scale?: number;
  /**
   * Cut each query's keys into this many chunks, run in parallel and merged by a second dispatch (flash
   * decoding, row kernels). Defaults to a choice from the shape: 1 (single pass) unless few queries face many keys
   * on a real GPU.
   */
  splits?: number;
  /** Kernel shape of the single pass ("row", "tile", "reg{BQ}x{BJ}", "lane{BJ}"); defaults to the adapter's pick. */
  variant?: AttentionVariant;
  /**
   * What the host knows of kvStart and kvEnd ({@linkcode rangeFacts}), for the default kernel choice: queries
   * that mostly sit in different sequences (decoding) take the lane kernel on CPU rasterisers, and its loop is
   * bounded by the longest range instead of S. A promise the host keeps: a longer range would silently end early on
   * lavapipe (see LOOP_BUDGET).
   */
  ranges?: RangeFacts;
}

/** Arguments of {@linkcode attentionBackward}. Every tensor f32. */
export interface AttentionBackwardArgs {
  /** [T, H, D], as given to the forward. */
  q: Tensor;
  /** [S, KV, D]. */
  k: Tensor;
  /** [S, KV, D]. */
  v: Tensor;
  /** [T, H, D] forward output. */
  o: Tensor;
  /** [T, H] forward log-sum-exp. */
  lse: Tensor;
  /** [T, H, D] gradient of the loss with respect to o. */
  dO: Tensor;
  /** [T] u32, as given to the forward. */
  kvStart: Tensor;
  /** [T] u32, as given to the forward. */
  kvEnd: Tensor;
  /** [S] u32: first query row that may attend to each key row (a loose bound is correct, only slower). */
  qStart: Tensor;
  /** [S] u32: one past the last query row that may attend to each key row. */
  qEnd: Tensor;
  /** Output [T, H, D], written (=). */
  dq: Tensor;
  /** Output [S, KV, D], written (=), summed over the H / KV query heads of each kv head. */
  dk: Tensor;
  /** Output [S, KV, D], written (=), summed likewise. */
  dv: Tensor;
  /** The forward's scale; defaults to 1 / sqrt(D). */
  scale?: number;
  /** Kernel shape ("row", "tile", "reg{BQ}x{BJ}_{BK}x{BF}"); defaults to the adapter's pick. */
  variant?: AttentionVariant;
}

/** The dimensions of one attention call: q [T, H, D], k and v [S, KV, D], H a multiple of KV, D <= 256. */
function dims(q: Tensor, k: Tensor, v: Tensor): AttentionDims {
  if (q.shape.length !== 3 || k.shape.length !== 3) {
    throw new TypeError(`Attention needs q [T, H, D] and k [S, KV, D], got q [${q.shape}] and k [${k.shape}]`);
  }
  const [T, H, D] = q.shape;
  const [S, KV, Dk] = k.shape;
  if (Dk !== D || v.shape.join() !== k.shape.join()) {
    throw new TypeError(`Attention k [${k.shape}] and v [${v.shape}] must both be [S, KV, ${D}] for q [${q.shape}]`);
  }
  if (KV === 0 || H % KV !== 0) {
    throw new TypeError(`Attention query heads (${H}) must be a multiple of the kv heads (${KV})`);
  }
  if (D < 1 || D > MAX_HEAD_DIM) throw new RangeError(`Attention head dimension ${D} is outside 1..${MAX_HEAD_DIM}`);
  return { T, S, H, KV, D };
}

function expect(what: string, t: Tensor, shape: readonly number[], dtype: Tensor["dtype"] = "f32"): void {
  if (t.shape.join() !== shape.join() || t.dtype !== dtype) {
    throw new TypeError(`Attention ${what} must be [${shape}] ${dtype}, got [${t.shape}] ${t.dtype}`);
  }
}

/**
 * Rows per tile for head dimension D: two [BK, D] f32 tiles plus WG range bounds and four BK-long row arrays must fit
 * the adapter's workgroup memory (16 KiB by default, more when the adapter offers it).
 */
export function tileRows(gpu: Gpu, D: number): number {
  const bytes = gpu.limits.maxComputeWorkgroupStorageSize - 8 * WG - 16;
  return Math.max(1, Math.min(MAX_TILE, Math.floor(bytes / (8 * D + 16))));
}

/** Template values of the reg entry points when a pipeline compiles another entry point. */
const IDLE_REG = {
  ...laneSlots(1, false),
  BQ: 1,
  BJ: 1,
  BKR: 1,
  REG_INIT: "let lo = 0u;\n  let hi = 0u;",
  REG_STEP: "",
  REG_SAVE: "",
  LANE_INIT: "",
  LANE_STEP: "",
  LANE_SAVE: "",
  DKV_INIT: "let lo = 0u;\n  let hi = 0u;",
  DKV_STEP: "",
  DKV_NEXT: "",
  DKV_SAVE: "",
};

/** Refuses a reg shape whose worst case passes llvmpipe's loop budget (see LOOP_BUDGET) on a CPU rasteriser. */
function checkBudget(gpu: Gpu, shape: AttentionShape, d: AttentionDims, backward: boolean): void {
  const steps = regLoopSteps(shape, d, backward);
  if (gpu.software && steps > LOOP_BUDGET) {
    const name = variantName(shape, backward);
    throw new RangeError(
      `Attention variant ${name} may run ${steps} loop iterations per invocation for T ${d.T}, S ${d.S}, past ` +
        `the ${LOOP_BUDGET} that CPU rasterisers allow; raise its keys (or tokens) per step`,
    );
  }
}

/** Lanes of a reg kernel on this adapter; throws when it has no subgroups of one fixed size. */
function lanesFor(gpu: Gpu, variant: string): number {
  const lanes = fixedSubgroupSize(gpu);
  if (lanes === 0) {
    throw new TypeError(
      `Attention variant "${variant}" needs subgroups of one fixed size, which this adapter lacks; use "row" or "tile"`,
    );
  }
  return lanes;
}

/**
 * The shader's kAt / vAt: element i of k and v as f32. An f16 cache is bound as u32 words of two halves, so that
 * the reg kernel's loads bring two elements each (it unpacks whole words itself) and no entry point needs the
 * shader-f16 feature to read it.
 */
function kvLoad(packed: boolean, wide = false): string {
  const at = (x: string) =>
    wide && packed
      ? `fn ${x}At(i: u32) -> f32 {\n  return unpack2x16float(${x}[i / 8u][(i % 8u) / 2u])[i % 2u];\n}`
      : wide
      ? `fn ${x}At(i: u32) -> f32 {\n  return ${x}[i / 4u][i % 4u];\n}`
      : packed
      ? `fn ${x}At(i: u32) -> f32 {\n  return unpack2x16float(${x}[i / 2u])[i % 2u];\n}`
      : `fn ${x}At(i: u32) -> f32 {\n  return ${x}[i];\n}`;
  return `${at("k")}\n${at("v")}`;
}

function forwardKernel(gpu: Gpu, D: number, kt: Tensor["dtype"], entryPoint: string, shape?: AttentionShape): Kernel {
  if (kt !== "f32" && kt !== "f16") throw new TypeError(`Attention k and v must be f32 or f16, got ${kt}`);
  if (kt === "f16" && D % 2 !== 0) throw new TypeError(`Attention with f16 k and v needs an even head size, got ${D}`);
  const packed = kt === "f16";
  // The lane kernel loads whole vec4s (4 f32 or 8 halves) where rows are made of them: lavapipe pays per load.
  const wide = shape?.kind === "lane" && D % (packed ? 8 : 4) === 0;
  const reg = shape?.kind === "reg" || shape?.kind === "lane" ? variantName(shape, false) : "";
  // Cached under the label: the generated reg code is large, so it is built and hashed once per device.
  const label = `attention_forward ${entryPoint}${reg ? ` ${reg}` : ""} D=${D} ${kt}`;
  return cachedKernel(gpu, label, () => {
    const template: Record<string, string | number> = {
      KS: wide ? (packed ? "vec4<u32>" : "vec4<f32>") : packed ? "u32" : "f32",
      KV_LOAD: kvLoad(packed, wide),
      D,
      WG,
      BK: tileRows(gpu, D),
      ...IDLE_REG,
    };
    if (shape?.kind === "reg") {
      const lanes = lanesFor(gpu, reg);
      const block = { D, rows: shape.bq, keys: shape.bj, lanes, packed };
      Object.assign(template, { ...laneSlots(lanes, true), BQ: shape.bq, BJ: shape.bj });
      Object.assign(template, forwardRegSlots(block));
    }
    if (shape?.kind === "lane") {
      Object.assign(template, { BJ: shape.bj }, forwardLaneSlots({ D, keys: shape.bj, packed, wide }));
    }
    return kernel(gpu, FORWARD_SHADER, { params: PARAMS, entryPoint, template, label });
  });
}

function backwardKernel(gpu: Gpu, D: number, entryPoint: string, shape: AttentionShape): Kernel {
  // Each reg pipeline gets only its own entry point's block (the other's slots stay idle), so backward variants
  // that share a dq (or dk/dv) block share its pipeline.
  const dq = entryPoint === "main_dq_reg";
  const reg = shape.kind !== "reg" ? "" : dq ? `dq ${shape.bq}x${shape.bj}` : `dkv ${shape.bk}x${shape.bf}`;
  const label = `attention_backward ${entryPoint}${reg ? ` ${reg}` : ""} D=${D}`;
  return cachedKernel(gpu, label, () => {
    const template: Record<string, string | number> = {
      KS: "f32",
      KV_LOAD: kvLoad(false),
      D,
      WG,
      BK: tileRows(gpu, D),
      ...IDLE_REG,
    };
    if (shape.kind === "reg") {
      const lanes = lanesFor(gpu, variantName(shape, true));
      Object.assign(template, laneSlots(lanes, true));
      Object.assign(
        template,
        dq
          ? { BQ: shape.bq, BJ: shape.bj, ...dqRegSlots({ D, rows: shape.bq, keys: shape.bj, lanes }) }
          : { BKR: shape.bk, ...dkvRegSlots({ D, rows: shape.bk, keys: shape.bf, lanes }) },
      );
    }
    return kernel(gpu, BACKWARD_SHADER, {
      params: PARAMS,
      entryPoint,
      template,
      label,
      bindings: BACKWARD_BINDINGS[entryPoint],
    });
  });
}

/**
 * The storage bindings each backward entry point uses (shaders/attention_backward.wgsl's header), so that its layout
 * holds only these: the shader declares 14, more than a browser allows per stage (10).
 */
const BACKWARD_BINDINGS: Record<string, readonly number[]> = (() => {
  const dq = [1, 2, 3, 4, 5, 6, 7, 8, 11, 12];
  const dkv = [1, 2, 3, 7, 9, 10, 12, 13, 14];
  return { main_dq: dq, main_dq_tile: dq, main_dq_reg: dq, main_dkv: dkv, main_dkv_tile: dkv, main_dkv_reg: dkv };
})();

/**
 * The number of key chunks of a forward with `rows` = T · H query rows over S key rows: 1 (single pass) when the
 * rows alone fill the device, as in training; otherwise enough chunks to reach a target count of invocations,
 * each at least 64 keys long when the rows span all S keys.
 */
export function pickSplits(gpu: Gpu, rows: number, S: number): number {
  // lavapipe runs one workgroup per core: split only a lone workgroup, as splitting two did not pay there
  // (docs/kernel-timings.md). A real GPU wants thousands of invocations (a guess: not measured on one).
  const target = gpu.software ? 2 * WG : 4096;
  if (rows * 2 > target) return 1;
  const splits = Math.min(Math.ceil(target / Math.max(rows, 1)), Math.floor(S / 64), 64);
  return splits >= 2 ? splits : 1;
}

/**
 * The forward's kernel shape and key chunks where the caller names neither: the autotuner's choice on a GPU that
 * has one for this shape, else the seed (the adapter's pick and pickSplits' chunks, as before tuning existed).
 */
function forwardPick(gpu: Gpu, d: AttentionDims, kt: Tensor["dtype"]): ForwardPick {
  const variant = pickAttentionForward(gpu, d);
  const kind = parseVariant(variant, false).kind;
  const splits = kind === "reg" || kind === "lane" ? 1 : pickSplits(gpu, d.T * d.H, d.S);
  const seed = forwardChoiceName({ variant, splits });
  const tuned = tunedAttention(gpu, {
    prefix: ATTENTION_TUNE_PREFIX,
    dims: d,
    backward: false,
    kt,
    seed,
    record: recordForward,
  });
  return tuned === undefined ? { variant, splits } : forwardChoice(tuned);
}

/** A timing job's forward of one candidate (attention_tune.ts). */
function recordForward(batch: Batch, t: AttentionJobTensors, name: string): void {
  const { variant, splits } = forwardChoice(name);
  attentionForward(batch, {
    q: t.q,
    k: t.k,
    v: t.v,
    kvStart: t.kvStart,
    kvEnd: t.kvEnd,
    o: t.o,
    lse: t.lse,
    variant,
    splits,
  });
}

/** A timing job's backward of one candidate (attention_tune.ts). */
function recordBackward(batch: Batch, t: AttentionJobTensors, variant: string): void {
  attentionBackward(batch, { ...t, variant });
}

/**
 * Records o and lse of attention over each query's key range.
 *
 * @example
 * ```ts
 * const r = packedCausalRanges([5, 3]);
 * const kvStart = fromHost(gpu, r.kvStart, [8], "u32"), kvEnd = fromHost(gpu, r.kvEnd, [8], "u32");
 * attentionForward(batch, { q, k, v, kvStart, kvEnd, o, lse }); // q [8, H, D], k and v [8, KV, D]
 * ```
 */
export function attentionForward(batch: Batch, args: AttentionForwardArgs): void {
  const { q, k, v, o, lse } = args;
  const d = dims(q, k, v);
  const { T, S, H, KV, D } = d;
  if (args.ranges) {
    const { longest, starts } = args.ranges;
    if (!Number.isInteger(longest) || longest < 1 || !Number.isInteger(starts) || starts < 1) {
      throw new RangeError(`Attention ranges need integers longest >= 1 and starts >= 1, got ${longest}, ${starts}`);
    }
    d.range = Math.min(longest, S);
    d.sequences = starts;
  }
  expect("q", q, [T, H, D]);
  if (k.dtype !== v.dtype) throw new TypeError(`Attention k (${k.dtype}) and v (${v.dtype}) must share a dtype`);
  expect("kvStart", args.kvStart, [T], "u32");
  expect("kvEnd", args.kvEnd, [T], "u32");
  expect("output o", o, [T, H, D]);
  expect("output lse", lse, [T, H]);
  const gpu = batch.gpu;
  const pick = args.variant === undefined && args.splits === undefined
    ? forwardPick(gpu, d, k.dtype)
    : { variant: args.variant ?? pickAttentionForward(gpu, d), splits: args.splits };
  const shape = parseVariant(pick.variant, false);
  if (shape.kind === "reg" || shape.kind === "lane") checkBudget(gpu, shape, d, false);
  // The reg and lane kernels are for CPU rasterisers, where splitting over keys does not pay.
  const splits = pick.splits ?? (shape.kind === "reg" || shape.kind === "lane" ? 1 : pickSplits(gpu, T * H, S));
  if (!Number.isInteger(splits) || splits < 1) throw new RangeError(`Attention splits must be >= 1, got ${splits}`);
  const params = { T, H, KV, S, scale: args.scale ?? 1 / Math.sqrt(D), splits };
  // Bindings by number (see the shader header); part and stats are bound only when splitting.
  const inputs = [q, k, v, args.kvStart, args.kvEnd];
  const rows = T * H;
  if (splits === 1) {
    const entry = { row: "main", tile: "main_tile", reg: "main_reg", lane: "main_lane" }[shape.kind];
    const lanes = shape.kind === "reg" ? lanesFor(gpu, args.variant ?? "reg") : 0;
    const count = {
      row: Math.ceil(rows / WG),
      tile: Math.ceil(T / WG) * H,
      reg: Math.ceil((T * (H / KV)) / (lanes * shape.bq)) * KV,
      lane: Math.ceil(rows / WG),
    }[shape.kind];
    batch.dispatch({
      kernel: forwardKernel(gpu, D, k.dtype, entry, shape),
      buffers: [...inputs, o, lse],
      params,
      grid: foldGrid(gpu, count),
      label: `attention forward ${variantName(shape, false)}`,
    });
    return;
  }
  // Scratch released at once: the pool hands it out again only after this batch is submitted.
  const part = empty(gpu, [splits, T, H, D], "f32", "attention partials");
  const stats = empty(gpu, [splits, T, H, 2], "f32", "attention partial stats");
  batch.dispatch({
    kernel: forwardKernel(gpu, D, k.dtype, "main_split"),
    buffers: [...inputs, o, lse, part, stats],
    params,
    grid: foldGrid(gpu, Math.ceil((rows * splits) / WG)),
    label: `attention forward split ${splits}`,
  });
  batch.dispatch({
    kernel: forwardKernel(gpu, D, k.dtype, "main_combine"),
    buffers: [...inputs, o, lse, part, stats],
    params,
    grid: foldGrid(gpu, Math.ceil(rows / WG)),
    label: "attention forward combine",
  });
  part.release();
  stats.release();
}

/**
 * Records dq, dk and dv of attention (two dispatches: dq and the per-row values the second needs, then dk and dv
 * per key row). Each binds only what its entry point reads and writes (BACKWARD_BINDINGS): 10 storage buffers for
 * dq, 9 for dk/dv, within a browser's 10 per stage.
 *
 * @example
 * ```ts
 * const r = packedCausalRanges([5, 3]); // upload r.kvStart, r.kvEnd, r.qStart, r.qEnd as [8] u32 tensors
 * attentionBackward(batch, { q, k, v, o, lse, dO, kvStart, kvEnd, qStart, qEnd, dq, dk, dv });
 * ```
 */
export function attentionBackward(batch: Batch, args: AttentionBackwardArgs): void {
  const { q, k, v } = args;
  const d = dims(q, k, v);
  const { T, S, H, KV, D } = d;
  for (const [name, t] of [["q", q], ["o", args.o], ["dO", args.dO], ["dq", args.dq]] as const) {
    expect(name, t, [T, H, D]);
  }
  for (const [name, t] of [["k", k], ["v", v], ["dk", args.dk], ["dv", args.dv]] as const) {
    expect(name, t, [S, KV, D]);
  }
  expect("lse", args.lse, [T, H]);
  expect("kvStart", args.kvStart, [T], "u32");
  expect("kvEnd", args.kvEnd, [T], "u32");
  expect("qStart", args.qStart, [S], "u32");
  expect("qEnd", args.qEnd, [S], "u32");
  const gpu = batch.gpu;
  const seed = pickAttentionBackward(gpu, d);
  const shape = parseVariant(
    args.variant ??
      tunedAttention(gpu, {
        prefix: ATTENTION_TUNE_PREFIX,
        dims: d,
        backward: true,
        kt: "f32",
        seed,
        record: recordBackward,
      }) ??
      seed,
    true,
  );
  if (shape.kind === "lane") throw new RangeError("Attention backward has no lane variant"); // parseVariant refuses it
  if (shape.kind === "reg") checkBudget(gpu, shape, d, true);
  const params = { T, H, KV, S, scale: args.scale ?? 1 / Math.sqrt(D), splits: 1 };
  const lanes = shape.kind === "reg" ? lanesFor(gpu, args.variant ?? "reg") : 0;
  // Per query row, from the dq kernel to the dk/dv kernel: (kvStart, kvEnd, lse, δ = rowsum(dO ⊙ o)), for reg
  // (kvStart, min(kvEnd, S), lse · log2 e, δ), floats as their bits ([T, H, 4]).
  const rowInfo = empty(gpu, [T, H, 4], "u32", "attention row info");
  // Both entry points share one layout (see the shader header): bind everything to both.
  const { o, dO, lse, kvStart, kvEnd, qStart, qEnd, dq, dk, dv } = args;
  const buffers = [q, k, v, kvStart, kvEnd, o, dO, lse, qStart, qEnd, dq, rowInfo, dk, dv];
  const name = variantName(shape, true);
  const dqEntry = { row: "main_dq", tile: "main_dq_tile", reg: "main_dq_reg" }[shape.kind];
  const dkvEntry = { row: "main_dkv", tile: "main_dkv_tile", reg: "main_dkv_reg" }[shape.kind];
  const dqCount = {
    row: Math.ceil((T * H) / WG),
    tile: Math.ceil(T / WG) * H,
    reg: Math.ceil((T * (H / KV)) / (lanes * shape.bq)) * KV,
  }[shape.kind];
  const dkvCount = {
    row: Math.ceil((S * KV) / WG),
    tile: Math.ceil(S / WG) * KV,
    reg: Math.ceil(S / (lanes * shape.bk)) * KV,
  }[shape.kind];
  batch.dispatch({
    kernel: backwardKernel(gpu, D, dqEntry, shape),
    buffers,
    params,
    grid: foldGrid(gpu, dqCount),
    label: `attention backward dq ${name}`,
  });
  batch.dispatch({
    kernel: backwardKernel(gpu, D, dkvEntry, shape),
    buffers,
    params,
    grid: foldGrid(gpu, dkvCount),
    label: `attention backward dk dv ${name}`,
  });
  rowInfo.release();
}
