/**
 * Matmul benchmark cases: every variant on the square 1024^3 product and on the products of a Qwen2.5-0.5B-sized
 * layer (C 896, I 4864, T 512 tokens): forward x·Wᵀ (NT), backward dx = dy·W (NN) and dW = dyᵀ·x (TN), f32 and f16
 * weights, and decode (M = 1..8 rows times a weight, and a quarter of the LM head: the whole one passes the 128 MiB
 * binding limit and is computed in vocabulary chunks). The GEMV kind is a candidate only for M <= 16.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { type DType, fromHost } from "../src/gpu/tensor.ts";
import { matmul, pickMatmulVariant } from "../src/ops/matmul.ts";
import { MATMUL_VARIANTS } from "../src/ops/matmul_variants.ts";
import { type BenchCase, registerBench } from "./registry.ts";

interface Product {
  M: number;
  N: number;
  K: number;
  /** "NN", "NT" or "TN": transposition of A then B. */
  trans: string;
  at: DType;
  bt: DType;
}

const C = 896, I = 4864, T = 512, V = 151936;

/** The products timed, in the order printed. */
export const MATMUL_PRODUCTS: readonly Product[] = [
  { M: 1024, N: 1024, K: 1024, trans: "NN", at: "f32", bt: "f32" },
  { M: 1024, N: 1024, K: 1024, trans: "NN", at: "f16", bt: "f16" },
  { M: T, N: I, K: C, trans: "NT", at: "f32", bt: "f32" }, // MLP up, forward
  { M: T, N: I, K: C, trans: "NT", at: "f32", bt: "f16" }, // same with f16 weights
  { M: T, N: C, K: I, trans: "NN", at: "f32", bt: "f32" }, // MLP up, dx
  { M: I, N: C, K: T, trans: "TN", at: "f32", bt: "f32" }, // MLP up, dW
  { M: T, N: C + 256, K: C, trans: "NT", at: "f32", bt: "f32" }, // fused QKV, forward
  { M: 1, N: I, K: C, trans: "NT", at: "f32", bt: "f32" }, // decode
  { M: 4, N: I, K: C, trans: "NT", at: "f32", bt: "f32" },
  { M: 8, N: I, K: C, trans: "NT", at: "f32", bt: "f32" },
  { M: 1, N: I, K: C, trans: "NT", at: "f32", bt: "f16" },
  { M: 1, N: V / 4, K: C, trans: "NT", at: "f32", bt: "f16" }, // a quarter of the LM head, decode
];

const BYTES: Record<string, number> = { f32: 4, f16: 2 };

/** "512x4864x896 NT f32xf16": sizes M x N x K, transpositions, input dtypes (one when equal). */
export function productName(p: Product): string {
  return `${p.M}x${p.N}x${p.K} ${p.trans} ${p.at === p.bt ? p.at : `${p.at}x${p.bt}`}`;
}

function filled(gpu: Gpu, shape: number[], dtype: DType) {
  const n = shape[0] * shape[1];
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 1009) / 1009 - 0.5;
  return fromHost(gpu, data, shape, dtype);
}

function cases(gpu: Gpu): BenchCase[] {
  const out: BenchCase[] = [];
  for (const p of MATMUL_PRODUCTS) {
    if ((p.at === "f16" || p.bt === "f16") && !gpu.features.f16) continue;
    const transA = p.trans[0] === "T", transB = p.trans[1] === "T";
    const picked = pickMatmulVariant(gpu, { ...p, transA, transB }).name;
    for (const v of MATMUL_VARIANTS) {
      if (v.kind === "gemv" && p.M > 16) continue;
      out.push({
        kernel: "matmul",
        variant: v.name,
        shape: productName(p),
        flops: 2 * p.M * p.N * p.K,
        bytes: p.M * p.K * BYTES[p.at] + p.K * p.N * BYTES[p.bt] + p.M * p.N * 4,
        picked: v.name === picked,
        setup(gpu) {
          const a = filled(gpu, transA ? [p.K, p.M] : [p.M, p.K], p.at);
          const b = filled(gpu, transB ? [p.N, p.K] : [p.K, p.N], p.bt);
          const c = filled(gpu, [p.M, p.N], "f32");
          return {
            record: (batch) => matmul(batch, { a, b, out: c, transA, transB, variant: v }),
            release: () => [a, b, c].forEach((t) => t.release()),
          };
        },
      });
    }
  }
  return out;
}

registerBench("matmul", cases);
