/**
 * Attention cases, every kernel shape the op offers for D 64 (attentionVariants) plus the adapter's pick, on Qwen2.5-0.5B
 * heads (H 14, KV 2, D 64):
 *   training  T 512 packed as 2 causal sequences of 256, forward and backward;
 *   decode    32 sequences x 1 query, each over 384 cached rows of its 512-row slot (f32 cache; the pick on f16 too);
 *   and decoding at the shape of the main job's rollouts, on the shipped tiny model's heads (H 4, KV 4, D 32): 64
 *   sequences x 1 query, each over 700 cached rows of its 2800-row slot (f32 and f16 caches).
 * Decode cases tell the op the facts of their ranges (rangeFacts), as inference does.
 * FLOPs count the useful work: 4 per (query, key) pair, head and dimension forward (q·k and p·v), 10 backward
 * (FlashAttention's 2.5x; the two-kernel backward also recomputes the scores, which is not counted).
 */
import { Batch } from "../src/gpu/batch.ts";
import type { Gpu } from "../src/gpu/device.ts";
import { type DType, empty, fromHost, type Tensor } from "../src/gpu/tensor.ts";
import {
  attentionBackward,
  attentionForward,
  cacheRanges,
  packedCausalRanges,
  rangeFacts,
} from "../src/ops/attention.ts";
import { attentionVariants, pickAttentionBackward, pickAttentionForward } from "../src/ops/attention_variants.ts";
import { filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { H, KV, D } = QWEN;
const SEQS = [256, 256];
const T = SEQS.reduce((a, b) => a + b, 0);
/** A decode shape: N sequences, each one query over `keys` cached rows of its `maxLen`-row slot. */
interface DecodeShape {
  N: number;
  maxLen: number;
  keys: number;
  H: number;
  KV: number;
  D: number;
}
const DECODE: DecodeShape = { N: 32, maxLen: 512, keys: 384, H, KV, D };
const ROLLOUT: DecodeShape = { N: 64, maxLen: 2800, keys: 700, H: 4, KV: 4, D: 32 };
const u32 = (gpu: Gpu, a: Uint32Array) => fromHost(gpu, a, [a.length], "u32");
const unique = (names: readonly string[]) => [...new Set(names)];

/** Query-key pairs a causal sequence of n tokens scores. */
const pairs = (n: number) => (n * (n + 1)) / 2;

function training(gpu: Gpu) {
  const r = packedCausalRanges(SEQS);
  const t = {
    q: filled(gpu, [T, H, D]),
    k: filled(gpu, [T, KV, D], "f32", 0.5),
    v: filled(gpu, [T, KV, D], "f32", 2),
    kvStart: u32(gpu, r.kvStart),
    kvEnd: u32(gpu, r.kvEnd),
    qStart: u32(gpu, r.qStart),
    qEnd: u32(gpu, r.qEnd),
    o: empty(gpu, [T, H, D]),
    lse: empty(gpu, [T, H]),
  };
  return t;
}

function decode(gpu: Gpu, c: DecodeShape, dtype: DType) {
  const S = c.N * c.maxLen;
  const slots = Array.from({ length: c.N }, (_, n) => n);
  const r = cacheRanges(slots, slots.map(() => c.keys - 1), c.maxLen);
  const t = {
    q: filled(gpu, [c.N, c.H, c.D]),
    k: filled(gpu, [S, c.KV, c.D], dtype, 0.5),
    v: filled(gpu, [S, c.KV, c.D], dtype, 2),
    kvStart: u32(gpu, r.kvStart),
    kvEnd: u32(gpu, r.kvEnd),
    o: empty(gpu, [c.N, c.H, c.D]),
    lse: empty(gpu, [c.N, c.H]),
  };
  return { t, ranges: rangeFacts(r.kvStart, r.kvEnd) };
}

function cases(gpu: Gpu): BenchCase[] {
  const out: BenchCase[] = [];
  const trainPairs = SEQS.reduce((s, n) => s + pairs(n), 0);
  const trainShape = `T${T} (${SEQS.length}x${SEQS[0]}) H${H} KV${KV} D${D}`;
  const dims = { T, S: T, H, KV, D };
  const pickF = pickAttentionForward(gpu, dims);
  for (const variant of unique([...attentionVariants(D, false), pickF])) {
    out.push({
      kernel: "attention_forward",
      variant,
      shape: trainShape,
      flops: 4 * trainPairs * H * D,
      picked: variant === pickF,
      setup(gpu) {
        const t = training(gpu);
        return {
          record: (batch) => attentionForward(batch, { ...t, variant }),
          release: () => releaseAll(Object.values(t)),
        };
      },
    });
  }
  const pickB = pickAttentionBackward(gpu, dims);
  for (const variant of unique([...attentionVariants(D, true), pickB])) {
    out.push({
      kernel: "attention_backward",
      variant,
      shape: trainShape,
      flops: 10 * trainPairs * H * D,
      picked: variant === pickB,
      async setup(gpu) {
        const t = training(gpu);
        const batch = new Batch(gpu);
        attentionForward(batch, t);
        await batch.submit();
        const g: Record<string, Tensor> = {
          dO: filled(gpu, [T, H, D]),
          dq: empty(gpu, [T, H, D]),
          dk: empty(gpu, [T, KV, D]),
          dv: empty(gpu, [T, KV, D]),
        };
        return {
          record: (batch) => attentionBackward(batch, { ...t, dO: g.dO, dq: g.dq, dk: g.dk, dv: g.dv, variant }),
          release: () => releaseAll([...Object.values(t), ...Object.values(g)]),
        };
      },
    });
  }
  const decodeCases = (c: DecodeShape, extra: string[], f16: string[]) => {
    const S = c.N * c.maxLen;
    const pick = pickAttentionForward(gpu, { T: c.N, S, H: c.H, KV: c.KV, D: c.D, range: c.keys, sequences: c.N });
    const one = (variant: string, dtype: DType): BenchCase => ({
      kernel: "attention_forward",
      variant,
      shape: `decode N${c.N} S${c.keys} of ${c.N}x${c.maxLen} H${c.H} KV${c.KV} D${c.D} ${dtype}`,
      flops: 4 * c.N * c.keys * c.H * c.D,
      // Each sequence's visible keys and values, read once; q read, o written.
      bytes: 2 * c.N * c.keys * c.KV * c.D * (dtype === "f16" ? 2 : 4) + 2 * c.N * c.H * c.D * 4,
      picked: variant === pick,
      setup(gpu) {
        const { t, ranges } = decode(gpu, c, dtype);
        return {
          record: (batch) => attentionForward(batch, { ...t, variant, ranges }),
          release: () => releaseAll(Object.values(t)),
        };
      },
    });
    for (const variant of unique([...extra, pick])) out.push(one(variant, "f32"));
    if (gpu.features.f16) { for (const variant of unique([...f16, pick])) out.push(one(variant, "f16")); }
  };
  decodeCases(DECODE, [...attentionVariants(D, false), "lane1"], []);
  // The reg kernels' walk over the union of 8 slots must stay within llvmpipe's loop budget: 4 keys per step.
  decodeCases(ROLLOUT, ["reg1x4", "lane1", "lane2"], ["reg1x4"]);
  return out;
}

registerBench("attention", cases);
