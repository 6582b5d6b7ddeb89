import assert from "node:assert/strict";
import { type DType, type Tensor, zeros } from "../../src/gpu/tensor.ts";
import {
  attentionBackward,
  attentionForward,
  type AttentionVariant,
  cacheRanges,
  packedCausalRanges,
  rangeFacts,
} from "../../src/ops/attention.ts";
import {
  LOOP_BUDGET,
  parseVariant,
  pickAttentionBackward,
  pickAttentionForward,
  regLoopSteps,
} from "../../src/ops/attention_variants.ts";
import { attentionBackwardRef, attentionForwardRef, type AttentionRef } from "../reference/attention.ts";
import { maxAbs, type Tolerance } from "../reference/check.ts";
import { roundF16, roundF32, uniformArray } from "../reference/random.ts";
import { noF16, noFixedSubgroups, noGpu, testGpu } from "../no_gpu.ts";
import { checkOp, type HostArrays, type OpInput } from "./check_op.ts";

const EPS32 = 2 ** -23;

/**
 * Tolerance of an f32 result built from dot products of length D and sums over at most n keys (or queries):
 * each adds about one rounding of the largest term, so the error stays below (D + n) · ε · size, where size is the
 * largest magnitude the result is made of (|v| for o, |lse| + 1 for lse, the gradient's own scale for dq, dk, dv).
 * f16 k and v are rounded on the host before the reference sees them, so they need no more than f32: the kernel
 * accumulates in f32 from the same values. The backward runs on the GPU's own forward, whose o and lse carry their
 * f32 error into δ = rowsum(dO ⊙ o) and P. Observed worst errors sit at least 10x below these bounds (at most 3.7e-7
 * absolute for o, 7.4e-7 for lse, 5.8e-7 for dq, 1.0e-6 for dk, 2.4e-6 for dv).
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

/**
 * A forward configuration: key chunks (undefined: the default choice) or a single-pass kernel shape, and whether
 * the host tells the op the facts of its ranges (which the default choice may act on).
 */
type Run = { splits?: number; variant?: AttentionVariant; facts?: boolean };

/** Runs of the named reg variants (tests that use them are ignored without subgroups of one fixed size). */
function regs(...names: AttentionVariant[]): Run[] {
  return names.map((variant) => ({ variant }));
}

/** checkOp's inputs of a case: q [T, H, D] f32, k and v [S, KV, D] in kvType, the key ranges [T] u32. */
function opInputs(c: Case, kvType: DType): Record<string, OpInput> {
  const { q, k, v } = data(c, kvType);
  return {
    q: { data: q, shape: [c.T, c.H, c.D] },
    k: { data: k, shape: [c.S, c.KV, c.D], dtype: kvType },
    v: { data: v, shape: [c.S, c.KV, c.D], dtype: kvType },
    kvStart: { data: c.kvStart, shape: [c.T], dtype: "u32" },
    kvEnd: { data: c.kvEnd, shape: [c.T], dtype: "u32" },
  };
}

/** The reference's view of a case on checkOp's host arrays. */
function refArgs(c: Case, x: HostArrays): AttentionRef {
  return { ...c, q: x.q, k: x.k, v: x.v, kvStart: x.kvStart, kvEnd: x.kvEnd };
}

/** Every configuration of `runs` in one checkOp (one batch, one readback): outputs `o <run>` and `lse <run>`. */
async function checkForward(c: Case, kvType: DType, runs: Run[]) {
  const { q, k, v } = data(c, kvType);
  const label = (run: Run) => `${run.variant ?? `splits=${run.splits ?? "auto"}`}${run.facts ? " facts" : ""}`;
  const lse = attentionForwardRef({ ...c, q, k, v }).lse; // for its tolerance
  const oTol = tol(c.D, c.n, maxAbs(v)), lseTol = tol(c.D, c.n, maxAbs(lse) + 1);
  await checkOp({
    name: `${c.name} ${kvType}`,
    inputs: opInputs(c, kvType),
    forward(batch, x) {
      const out: Record<string, Tensor> = {};
      for (const run of runs) {
        const o = zeros(batch.gpu, [c.T, c.H, c.D]), lse = zeros(batch.gpu, [c.T, c.H]);
        const ranges = run.facts ? rangeFacts(c.kvStart, c.kvEnd) : undefined;
        const { q, k, v, kvStart, kvEnd } = x;
        attentionForward(batch, { q, k, v, kvStart, kvEnd, o, lse, splits: run.splits, variant: run.variant, ranges });
        Object.assign(out, { [`o ${label(run)}`]: o, [`lse ${label(run)}`]: lse });
      }
      return out;
    },
    reference(x) {
      const r = attentionForwardRef(refArgs(c, x));
      return Object.fromEntries(runs.flatMap((run) => [[`o ${label(run)}`, r.o], [`lse ${label(run)}`, r.lse]]));
    },
    tol: Object.fromEntries(runs.flatMap((run) => [[`o ${label(run)}`, oTol], [`lse ${label(run)}`, lseTol]])),
  });
}

/**
 * The backward of `variant` on the GPU's own forward (default pick) through checkOp: dq, dk and dv against the
 * reference, the reference against finite differences of the forward at `probes` elements of q, k and v, and two
 * runs bit for bit equal (no atomics, one owner per output row, fixed summation order).
 */
async function checkBackward(c: Case, variant: AttentionVariant, probes?: number) {
  const { q, k, v, dO } = data(c, "f32");
  // For the tolerances.
  const fwd = attentionForwardRef({ ...c, q, k, v });
  const ref = attentionBackwardRef({ ...c, q, k, v, dO });
  // Magnitudes: dv sums n terms P·dO; dq and dk sum n terms of size scale · |dS| · |k| (or |q|).
  const n = c.n * (c.H / c.KV);
  await checkOp({
    name: `${c.name} ${variant}`,
    inputs: {
      ...opInputs(c, "f32"),
      qStart: { data: c.qStart!, shape: [c.S], dtype: "u32" },
      qEnd: { data: c.qEnd!, shape: [c.S], dtype: "u32" },
    },
    forward(batch, x) {
      const o = zeros(batch.gpu, [c.T, c.H, c.D]), lse = zeros(batch.gpu, [c.T, c.H]);
      attentionForward(batch, { q: x.q, k: x.k, v: x.v, kvStart: x.kvStart, kvEnd: x.kvEnd, o, lse });
      return { o, lse };
    },
    reference: (x) => attentionForwardRef(refArgs(c, x)),
    backward: {
      upstream: { o: dO },
      gpu(batch, x, dy, y) {
        const dq = zeros(batch.gpu, [c.T, c.H, c.D]);
        const [dk, dv] = [0, 1].map(() => zeros(batch.gpu, [c.S, c.KV, c.D]));
        const { q, k, v, kvStart, kvEnd, qStart, qEnd } = x;
        attentionBackward(batch, {
          q,
          k,
          v,
          o: y.o,
          lse: y.lse,
          dO: dy.o,
          kvStart,
          kvEnd,
          qStart,
          qEnd,
          dq,
          dk,
          dv,
          variant,
        });
        return { q: dq, k: dk, v: dv };
      },
      reference(x, dy) {
        const r = attentionBackwardRef({ ...refArgs(c, x), dO: dy.o });
        return { q: r.dq, k: r.dk, v: r.dv };
      },
      probes,
      deterministic: true,
    },
    tol: {
      o: tol(c.D, c.n, maxAbs(v)),
      lse: tol(c.D, c.n, maxAbs(fwd.lse) + 1),
      dq: tol(c.D, c.n, maxAbs(ref.dq) + 1e-3),
      dk: tol(c.D, n, maxAbs(ref.dk) + 1e-3),
      dv: tol(c.D, n, maxAbs(ref.dv) + 1e-3),
    },
  });
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

// Register-block variants (lavapipe): every shape the table of attention_variants.ts picks, on head dims <= its
// D bound (their first compile grows with the square of BQ · D).
const FWD_SMALL = ["reg6x2", "reg3x2", "reg1x2"];
const BWD_SMALL = ["reg3x2_3x1", "reg1x2_1x2", "reg1x1_1x1"];
// One invocation per query row over its own keys (any adapter: no subgroups).
const LANES: Run[] = [{ variant: "lane1" }, { variant: "lane2" }, { variant: "lane3" }];

Deno.test({
  name: "attention forward matches the f64 reference on packed batches (MHA and GQA, odd head dims)",
  ignore: noGpu,
  async fn() {
    const base: Run[] = [{ variant: "row" }, { variant: "tile" }, {}];
    for (const c of [MHA, GQA]) await checkForward(c, "f32", [...base, ...LANES]);
    for (const c of [QWEN, LONG, WIDE]) await checkForward(c, "f32", base);
  },
});

Deno.test({
  name: "attention forward register variants match the f64 reference (packed batches and a KV cache)",
  ignore: noGpu || noFixedSubgroups,
  async fn() {
    for (const c of [MHA, GQA, DECODE]) await checkForward(c, "f32", regs(...FWD_SMALL));
    await checkForward(QWEN, "f32", regs("reg3x2", "reg1x2"));
    await checkForward(LONG, "f32", regs("reg3x2"));
    await checkForward(WIDE, "f32", regs("reg1x2"));
  },
});

Deno.test({
  name: "attention forward into a KV cache: single pass and split over keys agree with the reference",
  ignore: noGpu,
  async fn() {
    const runs: Run[] = [
      { variant: "row" },
      { variant: "tile" },
      {},
      { facts: true },
      { splits: 3 },
      { splits: 7 },
      { splits: 64 },
    ];
    await checkForward(DECODE, "f32", [...runs, ...LANES]);
    // The lane kernel loads rows as vec4s where D is a multiple of 4; D = 6 and 10 take its element loads.
    for (const D of [6, 10]) await checkForward({ ...DECODE, name: `decode D=${D}`, D }, "f32", LANES);
  },
});

Deno.test({
  name: "attention forward with f16 k and v (f32 accumulation)",
  ignore: noGpu || noF16,
  async fn() {
    const base: Run[] = [{ variant: "row" }, { variant: "tile" }, {}];
    await checkForward(DECODE, "f16", [...base, { splits: 4 }, ...LANES]);
    // Packed rows of 8 halves a load where D is a multiple of 8 (40 above); D = 6 and 12 take one word a load.
    for (const D of [6, 12]) await checkForward({ ...DECODE, name: `decode D=${D}`, D }, "f16", LANES);
    await checkForward(GQA, "f16", [...base, ...LANES]);
  },
});

Deno.test({
  name: "attention forward register variants with f16 k and v",
  ignore: noGpu || noF16 || noFixedSubgroups,
  async fn() {
    for (const c of [DECODE, GQA]) await checkForward(c, "f16", regs("reg1x2", "reg6x2"));
  },
});

Deno.test({
  name: "attention backward matches the f64 reference and is deterministic (exact and loose query ranges)",
  ignore: noGpu,
  async fn() {
    // Loose ranges: every key row lists every query; the kernel must still apply each query's own range.
    const loose = { ...GQA, name: "GQA loose ranges", qStart: new Uint32Array(GQA.S), qEnd: new Uint32Array(GQA.S) };
    loose.qEnd.fill(GQA.T);
    for (const variant of ["row", "tile"]) {
      for (const c of [MHA, GQA, { ...loose, n: GQA.T }, QWEN, LONG]) await checkBackward(c, variant);
    }
    // D = 128 in the shapes lavapipe runs by default only: a first compile of the others takes tens of seconds.
    await checkBackward(WIDE, "row");
  },
});

Deno.test({
  name: "attention backward register variants match the f64 reference and are deterministic",
  ignore: noGpu || noFixedSubgroups,
  async fn() {
    const loose = { ...GQA, name: "GQA loose ranges", qStart: new Uint32Array(GQA.S), qEnd: new Uint32Array(GQA.S) };
    loose.qEnd.fill(GQA.T);
    for (const variant of BWD_SMALL) {
      for (const c of [MHA, GQA, { ...loose, n: GQA.T }]) await checkBackward(c, variant);
    }
    for (const variant of ["reg1x2_1x2", "reg1x1_1x1"]) {
      for (const c of [QWEN, LONG]) await checkBackward(c, variant);
    }
    await checkBackward(WIDE, "reg1x1_1x1");
  },
});

// Longer ranges than llvmpipe's loop budget lets a per-D loop kernel walk (65535 / (2 D + 1) = 508 keys at D = 64;
// the row kernels fail here on lavapipe), and one query over more keys than one key per step allows (140,000).
Deno.test({
  name: "attention over long ranges stays within llvmpipe's loop budget (default picks)",
  ignore: noGpu,
  async fn() {
    const one = packed("one sequence of 600, D=64", 2, 1, 64, [600], 70);
    await checkForward(one, "f32", [{}]);
    // 3 finite-difference probes per input, not 24: each costs two forward references over 180,000 query-key
    // pairs (24 took 17 s); the packed cases above probe the same reference code in full.
    await checkBackward(one, pickAttentionBackward(await testGpu(), one), 3);
    const S = 140_000;
    const far: Case = {
      name: "one query over 140000 keys",
      H: 1,
      KV: 1,
      D: 8,
      T: 1,
      S,
      kvStart: new Uint32Array([0]),
      kvEnd: new Uint32Array([S]),
      n: S,
      seed: 80,
    };
    await checkForward(far, "f32", [{}, { facts: true }]);
    // Decoding 3 sequences each over more keys than llvmpipe lets lane1 walk: the pick raises its keys per step.
    const L = 70_000;
    const long: Case = {
      ...far,
      name: "3 queries over 70000 keys each",
      T: 3,
      S: 3 * L,
      ...cacheRanges([0, 1, 2], [L - 1, 5, L - 2], L),
      n: L,
    };
    await checkForward(long, "f32", [{ facts: true }]);
  },
});

Deno.test("attention variants: names parse and bad names are refused", () => {
  assert.deepEqual(parseVariant("reg6x2", false), { kind: "reg", bq: 6, bj: 2, bk: 0, bf: 0 });
  assert.deepEqual(parseVariant("reg3x2_3x1", true), { kind: "reg", bq: 3, bj: 2, bk: 3, bf: 1 });
  assert.equal(parseVariant("tile", true).kind, "tile");
  assert.deepEqual(parseVariant("lane4", false), { kind: "lane", bq: 0, bj: 4, bk: 0, bf: 0 });
  assert.throws(() => parseVariant("lane2", true), RangeError);
  assert.throws(() => parseVariant("lane0", false), RangeError);
  assert.throws(() => parseVariant("reg3x2", true), RangeError);
  assert.throws(() => parseVariant("reg0x2", false), RangeError);
  assert.throws(() => parseVariant("big", false), RangeError);
});

Deno.test({
  name: "attention picks on this adapter are valid variants within llvmpipe's loop budget",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    if (gpu.software) {
      // Decoding with one kv head per query head: lane1, raised past llvmpipe's budget; with 7 per kv head: not lane.
      const tiny = { T: 64, S: 64 * 2800, H: 4, KV: 4, D: 32 };
      assert.equal(pickAttentionForward(gpu, { ...tiny, range: 701, sequences: 64 }), "lane1");
      assert.equal(pickAttentionForward(gpu, { ...tiny, range: 140_000, sequences: 64 }), "lane3");
      assert.notEqual(pickAttentionForward(gpu, { ...tiny, range: 701, sequences: 2 }), "lane1"); // a prefill chunk
      assert.notEqual(pickAttentionForward(gpu, { ...tiny, H: 14, KV: 2, range: 701, sequences: 64 }), "lane1");
    }
    for (const D of [24, 32, 64, 128, 256]) {
      for (const [T, S] of [[2048, 2048], [32, 9600], [40_000, 40_000], [8, 300_000]]) {
        const dims = { T, S, H: 14, KV: 2, D };
        const f = parseVariant(pickAttentionForward(gpu, dims), false);
        const b = parseVariant(pickAttentionBackward(gpu, dims), true);
        if (f.kind === "reg") assert.ok(regLoopSteps(f, dims, false) <= LOOP_BUDGET, `${D} ${T} ${S}`);
        // Decoding: one query per sequence, each range at most S / T keys.
        const apart = { ...dims, range: Math.ceil(S / T), sequences: T };
        const fa = parseVariant(pickAttentionForward(gpu, apart), false);
        assert.ok(fa.kind === "row" || fa.kind === "tile" || regLoopSteps(fa, apart, false) <= LOOP_BUDGET);
        if (b.kind === "reg") assert.ok(regLoopSteps(b, dims, true) <= LOOP_BUDGET, `${D} ${T} ${S}`);
      }
    }
  },
});
