/**
 * Attention's use of the autotuner (src/gpu/tuner.ts) on GPUs: which kernel shape runs a forward (row, tile, lane,
 * a register block, or a split over keys with its chunk count) and a backward (row, tile, a register block), timed
 * on the adapter per shape. CPU rasterisers keep their measured picks (attention_variants.ts) and never tune: there
 * the shapes sum in different orders, so a different pick would change the bits of a run.
 *
 * A timing job has only the shape and what the host told the op of its ranges, not the ranges themselves (they are
 * on the GPU), so it builds like ones: decoding (range facts given) puts each query in its own cache slot with the
 * longest range; otherwise queries form packed causal sequences of up to 512 tokens (the batches' usual length), or
 * with S > T (a prefill into a cache) see every key up to their own position.
 */
import type { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { fromHost, type Tensor, zeros } from "../gpu/tensor.ts";
import { timeRecorded } from "../gpu/timing.ts";
import { type TuneJob, tunerOf } from "../gpu/tuner.ts";
import { packedCausalRanges } from "./attention_ranges.ts";
import { type AttentionDims, attentionVariants, REG_MAX_HEAD_DIM } from "./attention_variants.ts";
import { pow2Bucket } from "./matmul_variants.ts";
import { fixedSubgroupSize } from "./wgsl.ts";

/** Key chunks a split forward candidate may take (each a candidate where every chunk keeps at least 16 keys). */
const SPLITS = [2, 8, 32];

/** What a forward runs: a kernel shape, and key chunks for the row and tile shapes (1: single pass). */
export interface ForwardPick {
  variant: string;
  splits?: number;
}

/** A forward choice's name: the variant, or `split{n}` for n key chunks (main_split and main_combine). */
export function forwardChoiceName(p: ForwardPick): string {
  return (p.splits ?? 1) > 1 ? `split${p.splits}` : p.variant;
}

/** The pick a forward choice's name stands for. */
export function forwardChoice(name: string): ForwardPick {
  const m = /^split(\d+)$/.exec(name);
  return m ? { variant: "row", splits: Number(m[1]) } : { variant: name, splits: 1 };
}

/** Whether the host told the op its ranges' facts (decoding): they key the choice and shape the timing job. */
function decoding(d: AttentionDims): boolean {
  return d.range !== undefined && d.sequences !== undefined;
}

/**
 * The autotuner's key of an attention call, after `prefix` (the op and its shaders' hash, attention.ts): direction,
 * dtype of k and v, dimensions, and the ranges' kind.
 */
export function attentionKey(prefix: string, d: AttentionDims, backward: boolean, kt: Tensor["dtype"] = "f32"): string {
  const ranges = decoding(d) ? `decode L${pow2Bucket(d.range!)} n${pow2Bucket(d.sequences!)}` : "all";
  return `${prefix} ${backward ? "bwd" : "fwd"} ${kt} T${pow2Bucket(d.T)} S${pow2Bucket(d.S)} ` +
    `H${d.H} KV${d.KV} D${d.D} ${ranges}`;
}

/** The choices a GPU times for a forward of this shape (none on CPU rasterisers). */
export function forwardCandidates(gpu: Pick<Gpu, "software" | "info" | "features">, d: AttentionDims): string[] {
  if (gpu.software) return [];
  const reg = fixedSubgroupSize(gpu as Gpu) > 0 && d.D <= REG_MAX_HEAD_DIM
    ? attentionVariants(d.D, false).filter((v) => v.startsWith("reg"))
    : [];
  const lane = decoding(d) && d.D <= REG_MAX_HEAD_DIM ? ["lane1"] : [];
  const split = SPLITS.filter((n) => d.S / n >= 16).map((n) => `split${n}`);
  return ["row", "tile", ...lane, ...reg, ...split];
}

/** The choices a GPU times for a backward of this shape (none on CPU rasterisers). */
export function backwardCandidates(gpu: Pick<Gpu, "software" | "info" | "features">, d: AttentionDims): string[] {
  if (gpu.software) return [];
  const reg = fixedSubgroupSize(gpu as Gpu) > 0 && d.D <= REG_MAX_HEAD_DIM
    ? attentionVariants(d.D, true).filter((v) => v.startsWith("reg"))
    : [];
  return ["row", "tile", ...reg];
}

/** Ranges like the call's (see the module header): kvStart, kvEnd [T] and qStart, qEnd [S]. */
export function likeRanges(
  d: AttentionDims,
): { kvStart: Uint32Array; kvEnd: Uint32Array; qStart: Uint32Array; qEnd: Uint32Array } {
  const { T, S } = d;
  const kvStart = new Uint32Array(T), kvEnd = new Uint32Array(T);
  if (decoding(d)) {
    const slots = Math.max(1, Math.min(d.sequences!, T)), slot = Math.max(1, Math.floor(S / slots));
    const len = Math.max(1, Math.min(d.range!, slot));
    for (let t = 0; t < T; t++) {
      kvStart[t] = (t % slots) * slot;
      kvEnd[t] = kvStart[t] + len;
    }
  } else if (S === T) {
    const lengths = Array.from({ length: Math.ceil(T / 512) }, (_, i) => Math.min(512, T - 512 * i));
    return packedCausalRanges(lengths);
  } else {
    for (let t = 0; t < T; t++) kvEnd[t] = Math.min(S, Math.max(1, S - T + t + 1));
  }
  // Loose query ranges (every query may see every key): correct, and only the backward reads them.
  return { kvStart, kvEnd, qStart: new Uint32Array(S), qEnd: new Uint32Array(S).fill(T) };
}

/** The tensors of a timing job, filled with fixed values. */
export interface AttentionJobTensors {
  q: Tensor;
  k: Tensor;
  v: Tensor;
  kvStart: Tensor;
  kvEnd: Tensor;
  qStart: Tensor;
  qEnd: Tensor;
  o: Tensor;
  lse: Tensor;
  dO: Tensor;
  dq: Tensor;
  dk: Tensor;
  dv: Tensor;
}

/** Records one candidate on a job's tensors (attention.ts passes its own forward or backward). */
export type AttentionRecorder = (batch: Batch, t: AttentionJobTensors, choice: string) => void;

function jobTensors(gpu: Gpu, d: AttentionDims, kt: Tensor["dtype"]): AttentionJobTensors {
  const { T, S, H, KV, D } = d;
  const r = likeRanges(d);
  const fill = (shape: number[], dtype: Tensor["dtype"] = "f32") => {
    const n = shape.reduce((a, b) => a * b, 1);
    return fromHost(gpu, Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 1009) / 1009 - 0.5), shape, dtype);
  };
  const u32 = (x: Uint32Array, n: number) => fromHost(gpu, x, [n], "u32");
  return {
    q: fill([T, H, D]),
    k: fill([S, KV, D], kt),
    v: fill([S, KV, D], kt),
    kvStart: u32(r.kvStart, T),
    kvEnd: u32(r.kvEnd, T),
    qStart: u32(r.qStart, S),
    qEnd: u32(r.qEnd, S),
    o: fill([T, H, D]),
    lse: zeros(gpu, [T, H]),
    dO: fill([T, H, D]),
    dq: zeros(gpu, [T, H, D]),
    dk: zeros(gpu, [S, KV, D]),
    dv: zeros(gpu, [S, KV, D]),
  };
}

/**
 * The tuned choice's name for an attention call, or undefined (the op then runs its seed); a miss files a job that
 * times `candidates` at the next sync point, `seed` among them.
 */
export function tunedAttention(
  gpu: Gpu,
  c: {
    prefix: string;
    dims: AttentionDims;
    backward: boolean;
    kt: Tensor["dtype"];
    seed: string;
    record: AttentionRecorder;
  },
): string | undefined {
  const tuner = tunerOf(gpu);
  if (!tuner.active || gpu.software) return undefined;
  const key = attentionKey(c.prefix, c.dims, c.backward, c.kt);
  const tuned = tuner.choice(key);
  if (tuned !== undefined) return tuned;
  const candidates = (c.backward ? backwardCandidates : forwardCandidates)(gpu, c.dims);
  if (!candidates.includes(c.seed)) candidates.unshift(c.seed);
  if (candidates.length < 2 || c.dims.T === 0 || c.dims.S === 0) return undefined;
  if (c.backward && c.dims.S !== c.dims.T) return undefined; // the backward runs on packed batches only
  tuner.request(key, (): TuneJob => {
    const t = jobTensors(gpu, c.dims, c.kt);
    return {
      candidates,
      seed: c.seed,
      measure: (name) => timeRecorded(gpu, (batch) => c.record(batch, t, name)),
      done: () => Object.values(t).forEach((x) => x.release()),
    };
  });
  return undefined;
}
