/**
 * Optimizer cases over the gradients of one Qwen2.5-0.5B layer (12 tensors, 14.9 M values): the global gradient
 * norm (two stages) and the AdamW update of every tensor, one dispatch each ("default", as the trainer records them
 * where the parameters are not in an arena), or over the layer as one arena chunk ("arena", as it records them for
 * sets in an arena: src/model/weights.ts).
 */
import type { Gpu } from "../src/gpu/device.ts";
import { type Tensor, zeros } from "../src/gpu/tensor.ts";
import { adamw } from "../src/ops/adamw.ts";
import { gradNorm } from "../src/ops/gradnorm.ts";
import { constant, filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { C, I, H, KV, D } = QWEN;

/** Element counts of one layer's parameters (Qwen2: q, k, v biases; two norms). */
export const LAYER_SIZES: readonly number[] = [
  C, // input norm
  H * D * C, // q
  H * D,
  KV * D * C, // k
  KV * D,
  KV * D * C, // v
  KV * D,
  C * H * D, // o
  C, // post-attention norm
  I * C, // gate
  I * C, // up
  C * I, // down
];

const TOTAL = LAYER_SIZES.reduce((a, b) => a + b, 0);
const SHAPE = `1 layer, ${LAYER_SIZES.length} tensors, ${(TOTAL / 1e6).toFixed(1)} M`;

function cases(_gpu: Gpu): BenchCase[] {
  const out: BenchCase[] = [];
  for (const arena of [false, true]) {
    // The arena holds the layer in one chunk: one tensor of all its values.
    const sizes = arena ? [TOTAL] : LAYER_SIZES;
    const variant = arena ? "arena" : "default";
    out.push({
      kernel: "gradnorm",
      variant,
      shape: SHAPE,
      bytes: TOTAL * 4,
      setup(gpu) {
        const grads = sizes.map((n) => filled(gpu, [n], "f32", 1e-3));
        const stats = zeros(gpu, [4]);
        return { record: (batch) => gradNorm(batch, grads, stats, 1), release: () => releaseAll([...grads, stats]) };
      },
    }, {
      kernel: "adamw",
      variant,
      shape: SHAPE,
      // w, g, m, v read; w, m, v written.
      bytes: TOTAL * 28,
      setup(gpu) {
        const states = sizes.map((n) => ({
          w: filled(gpu, [n], "f32", 0.04),
          g: filled(gpu, [n], "f32", 1e-3),
          m: zeros(gpu, [n]),
          v: zeros(gpu, [n]),
        }));
        // gradNorm's output: norm, clip scale 1, finite.
        const stats = constant(gpu, [4], 1);
        const all: Tensor[] = [...states.flatMap((s) => Object.values(s)), stats];
        return {
          record: (batch) => states.forEach((s) => adamw(batch, s, stats, { lr: 1e-5, step: 1 })),
          release: () => releaseAll(all),
        };
      },
    });
  }
  return out;
}

registerBench("optimizer", cases);
