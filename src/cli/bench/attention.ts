/**
 * Attention cases, every kernel shape the op offers for D 64 (attentionVariants) plus the adapter's pick, on Qwen2.5-0.5B
 * heads (H 14, KV 2, D 64):
 *   training  T 512 packed as 2 causal sequences of 256, forward and backward;
 *   decode    32 sequences x 1 query, each over 384 cached rows of its 512-row slot (f32 cache; the pick on f16 too).
 * FLOPs count the useful work: 4 per (query, key) pair, head and dimension forward (q·k and p·v), 10 backward
 * (FlashAttention's 2.5x; the two-kernel backward also recomputes the scores, which is not counted).
 */
import { Batch } from "../../gpu/batch.ts";
import type { Gpu } from "../../gpu/device.ts";
import { type DType, empty, fromHost, type Tensor } from "../../gpu/tensor.ts";
import { attentionBackward, attentionForward, cacheRanges, packedCausalRanges } from "../../ops/attention.ts";
import { attentionVariants, pickAttentionBackward, pickAttentionForward } from "../../ops/attention_variants.ts";
import { filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { H, KV, D } = QWEN;
const SEQS = [256, 256];
const T = SEQS.reduce((a, b) => a + b, 0);
const DECODE = { N: 32, maxLen: 512, keys: 384 };
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

function decode(gpu: Gpu, dtype: DType) {
  const S = DECODE.N * DECODE.maxLen;
  const slots = Array.from({ length: DECODE.N }, (_, n) => n);
  const r = cacheRanges(slots, slots.map(() => DECODE.keys - 1), DECODE.maxLen);
  return {
    q: filled(gpu, [DECODE.N, H, D]),
    k: filled(gpu, [S, KV, D], dtype, 0.5),
    v: filled(gpu, [S, KV, D], dtype, 2),
    kvStart: u32(gpu, r.kvStart),
    kvEnd: u32(gpu, r.kvEnd),
    o: empty(gpu, [DECODE.N, H, D]),
    lse: empty(gpu, [DECODE.N, H]),
  };
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
  const S = DECODE.N * DECODE.maxLen;
  const decodeDims = { T: DECODE.N, S, H, KV, D };
  const pickD = pickAttentionForward(gpu, decodeDims);
  const decodeCase = (variant: string, dtype: DType): BenchCase => ({
    kernel: "attention_forward",
    variant,
    shape: `decode N${DECODE.N} S${DECODE.keys} of ${DECODE.N}x${DECODE.maxLen} H${H} KV${KV} D${D} ${dtype}`,
    flops: 4 * DECODE.N * DECODE.keys * H * D,
    // Each sequence's visible keys and values, read once; q read, o written.
    bytes: 2 * DECODE.N * DECODE.keys * KV * D * (dtype === "f16" ? 2 : 4) + 2 * DECODE.N * H * D * 4,
    picked: variant === pickD,
    setup(gpu) {
      const t = decode(gpu, dtype);
      return {
        record: (batch) => attentionForward(batch, { ...t, variant }),
        release: () => releaseAll(Object.values(t)),
      };
    },
  });
  for (const variant of unique([...attentionVariants(D, false), pickD])) out.push(decodeCase(variant, "f32"));
  if (gpu.features.f16) out.push(decodeCase(pickD, "f16"));
  return out;
}

registerBench("attention", cases);
