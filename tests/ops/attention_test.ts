import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { type DType, fromHost, type HostArray, type Tensor, zeros } from "../../src/gpu/tensor.ts";
import {
  attentionBackward,
  attentionForward,
  type AttentionVariant,
  cacheRanges,
  packedCausalRanges,
} from "../../src/ops/attention.ts";
import { attentionBackwardRef, attentionForwardRef } from "../reference/attention.ts";
import { assertClose, maxAbs, type Tolerance } from "../reference/check.ts";
import { roundF16, roundF32, uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const EPS32 = 2 ** -23;

/**
 * Tolerance of an f32 result built from dot products of length D and sums over at most n keys (or queries):
 * each adds about one rounding of the largest term, so the error stays below (D + n) · ε · size, where size is the
 * largest magnitude the result is made of (|v| for o, |lse| + 1 for lse, the gradient's own scale for dq, dk, dv).
 * f16 k and v are rounded on the host before the reference sees them, so they need no more than f32: the kernel
 * accumulates in f32 from the same values. Observed worst errors sit 10-400x below these bounds (at most 2.5e-7
 * absolute for o, dq and dk, 1.8e-6 for dv).
 */
function tol(D: number, n: number, size: number): Tolerance {
  return { atol: (D + n) * EPS32 * size, rtol: (D + n) * EPS32 };
}

interface Case {
  name: string;
  H: number;
  KV: number;
  D: number;
  T: number;
  S: number;
  kvStart: Uint32Array;
  kvEnd: Uint32Array;
  qStart?: Uint32Array;
  qEnd?: Uint32Array;
  /** Longest key range of a query (and query range of a key), for the tolerance. */
  n: number;
  seed: number;
}

function data(c: Case, kvType: DType) {
  const round = kvType === "f16" ? roundF16 : roundF32;
  return {
    q: roundF32(uniformArray(c.seed, c.T * c.H * c.D, -1.5, 1.5)),
    k: round(uniformArray(c.seed + 1, c.S * c.KV * c.D, -1.5, 1.5)),
    v: round(uniformArray(c.seed + 2, c.S * c.KV * c.D)),
    dO: roundF32(uniformArray(c.seed + 3, c.T * c.H * c.D)),
  };
}

/** A forward configuration: key chunks (undefined: the default choice) or a single-pass kernel shape. */
type Run = { splits?: number; variant?: AttentionVariant };

async function checkForward(c: Case, kvType: DType, runs: Run[]) {
  const gpu = await testGpu();
  const { q, k, v } = data(c, kvType);
  const ref = attentionForwardRef({ ...c, q, k, v });
  const tq = fromHost(gpu, q, [c.T, c.H, c.D]);
  const tk = fromHost(gpu, k, [c.S, c.KV, c.D], kvType);
  const tv = fromHost(gpu, v, [c.S, c.KV, c.D], kvType);
  const kvStart = fromHost(gpu, c.kvStart, [c.T], "u32");
  const kvEnd = fromHost(gpu, c.kvEnd, [c.T], "u32");
  const outs: Tensor[] = [];
  const batch = new Batch(gpu);
  for (const run of runs) {
    const o = zeros(gpu, [c.T, c.H, c.D]);
    const lse = zeros(gpu, [c.T, c.H]);
    attentionForward(batch, { q: tq, k: tk, v: tv, kvStart, kvEnd, o, lse, ...run });
    outs.push(o, lse);
  }
  const got = await batch.read(outs); // one sync point for every configuration
  runs.forEach((run, i) => {
    const what = `${c.name} ${kvType} ${run.variant ?? `splits=${run.splits ?? "auto"}`}`;
    assertClose(`${what} o`, got[2 * i], ref.o, tol(c.D, c.n, maxAbs(v)));
    assertClose(`${what} lse`, got[2 * i + 1], ref.lse, tol(c.D, c.n, maxAbs(ref.lse) + 1));
  });
  for (const t of [tq, tk, tv, kvStart, kvEnd, ...outs]) t.release();
}

async function checkBackward(c: Case, variant: AttentionVariant) {
  const gpu = await testGpu();
  const { q, k, v, dO } = data(c, "f32");
  const fwd = attentionForwardRef({ ...c, q, k, v });
  const ref = attentionBackwardRef({ ...c, q, k, v, dO });
  const up = (x: HostArray, shape: number[], dtype: DType = "f32") => fromHost(gpu, x, shape, dtype);
  const inputs = {
    q: up(q, [c.T, c.H, c.D]),
    k: up(k, [c.S, c.KV, c.D]),
    v: up(v, [c.S, c.KV, c.D]),
    o: up(fwd.o, [c.T, c.H, c.D]),
    lse: up(fwd.lse, [c.T, c.H]),
    dO: up(dO, [c.T, c.H, c.D]),
    kvStart: up(c.kvStart, [c.T], "u32"),
    kvEnd: up(c.kvEnd, [c.T], "u32"),
    qStart: up(c.qStart!, [c.S], "u32"),
    qEnd: up(c.qEnd!, [c.S], "u32"),
  };
  const grads = [0, 1].map(() => ({
    dq: zeros(gpu, [c.T, c.H, c.D]),
    dk: zeros(gpu, [c.S, c.KV, c.D]),
    dv: zeros(gpu, [c.S, c.KV, c.D]),
  }));
  const batch = new Batch(gpu);
  for (const g of grads) attentionBackward(batch, { ...inputs, ...g, variant });
  const [dq, dk, dv, dq2, dk2, dv2] = await batch.read(grads.flatMap((g) => [g.dq, g.dk, g.dv]));
  // Magnitudes: dv sums n terms P·dO; dq and dk sum n terms of size scale · |dS| · |k| (or |q|).
  const n = c.n * (c.H / c.KV);
  const what = `${c.name} ${variant}`;
  assertClose(`${what} dq`, dq, ref.dq, tol(c.D, c.n, maxAbs(ref.dq) + 1e-3));
  assertClose(`${what} dk`, dk, ref.dk, tol(c.D, n, maxAbs(ref.dk) + 1e-3));
  assertClose(`${what} dv`, dv, ref.dv, tol(c.D, n, maxAbs(ref.dv) + 1e-3));
  // Deterministic: no atomics, one owner per output row, fixed summation order.
  assert.deepEqual([dq2, dk2, dv2], [dq, dk, dv]);
  for (const t of [...Object.values(inputs), ...grads.flatMap((g) => [g.dq, g.dk, g.dv])]) t.release();
}

/** A packed training batch (S = T) with a padding row at the end and the exact query ranges. */
function packed(name: string, H: number, KV: number, D: number, lengths: number[], seed: number): Case {
  const T = lengths.reduce((a, b) => a + b, 0) + 1;
  const r = packedCausalRanges(lengths, { padTo: T });
  return { name, H, KV, D, T, S: T, ...r, n: Math.max(...lengths), seed };
}

// Lengths that are multiples of no tile size, with a length-1 sequence; odd head dims 24 and 40, and Qwen's 64.
const MHA = packed("MHA D=24", 3, 3, 24, [7, 1, 12, 5], 10);
const GQA = packed("GQA 3:1 D=40", 6, 2, 40, [13, 1, 9, 20], 20);
const QWEN = packed("GQA 7:1 D=64", 14, 2, 64, [11, 1, 6], 30);
// More rows than one workgroup (64) of the tiled kernels, and a sequence crossing a block edge.
const LONG = packed("GQA 2:1 D=64 T=105", 2, 1, 64, [70, 1, 33], 50);
// Qwen2.5-1.5B and larger use D = 128.
const WIDE = packed("GQA 6:1 D=128", 6, 1, 128, [9, 1, 4], 60);

// Decode-like: a cache of 3 slots x 50 rows, every row filled (other slots' rows must be ignored); four queries,
// two of them consecutive positions of slot 0 (as in a prefill chunk), one at the first row of slot 2.
const MAX_LEN = 50;
const cache = cacheRanges([0, 2, 1, 0], [37, 0, 49, 38], MAX_LEN);
const DECODE: Case = {
  name: "decode GQA 2:1 D=40",
  H: 4,
  KV: 2,
  D: 40,
  T: 4,
  S: 3 * MAX_LEN,
  ...cache,
  n: 50,
  seed: 40,
};

Deno.test({
  name: "attention forward matches the f64 reference on packed batches (MHA and GQA, odd head dims)",
  ignore: noGpu,
  async fn() {
    for (const c of [MHA, GQA, QWEN, LONG, WIDE]) {
      await checkForward(c, "f32", [{ variant: "row" }, { variant: "tile" }]);
    }
  },
});

Deno.test({
  name: "attention forward into a KV cache: single pass and split over keys agree with the reference",
  ignore: noGpu,
  async fn() {
    const runs: Run[] = [{ variant: "row" }, { variant: "tile" }, {}, { splits: 3 }, { splits: 7 }, { splits: 64 }];
    await checkForward(DECODE, "f32", runs);
  },
});

Deno.test({
  name: "attention forward with f16 k and v (f32 accumulation)",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    if (!gpu.features.f16) return;
    await checkForward(DECODE, "f16", [{ variant: "row" }, { variant: "tile" }, { splits: 4 }]);
    await checkForward(GQA, "f16", [{ variant: "row" }, { variant: "tile" }]);
  },
});

Deno.test({
  name: "attention backward matches the f64 reference and is deterministic (exact and loose query ranges)",
  ignore: noGpu,
  async fn() {
    // Loose ranges: every key row lists every query; the kernel must still apply each query's own range.
    const loose = { ...GQA, name: "GQA loose ranges", qStart: new Uint32Array(GQA.S), qEnd: new Uint32Array(GQA.S) };
    loose.qEnd.fill(GQA.T);
    for (const variant of ["row", "tile"] as const) {
      for (const c of [MHA, GQA, QWEN, LONG, { ...loose, n: GQA.T }]) await checkBackward(c, variant);
    }
    // D = 128 in the shape lavapipe runs by default only: a first compile of it takes tens of seconds here.
    await checkBackward(WIDE, "row");
  },
});
