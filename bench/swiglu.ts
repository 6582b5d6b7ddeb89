/** SwiGLU cases over the MLP width of Qwen2.5-0.5B: h = silu(g) · u on [T 512, I 4864], and its backward. */
import type { Gpu } from "../src/gpu/device.ts";
import { empty } from "../src/gpu/tensor.ts";
import { swigluBackward, swigluForward } from "../src/ops/swiglu.ts";
import { filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { T, I } = QWEN;
const SHAPE = `T${T} I${I}`;
const N = T * I;

function cases(_gpu: Gpu): BenchCase[] {
  return [{
    kernel: "swiglu_forward",
    variant: "default",
    shape: SHAPE,
    bytes: 3 * N * 4,
    setup(gpu) {
      const g = filled(gpu, [T, I], "f32", 4), u = filled(gpu, [T, I]), h = empty(gpu, [T, I]);
      return { record: (batch) => swigluForward(batch, g, u, h), release: () => releaseAll([g, u, h]) };
    },
  }, {
    kernel: "swiglu_backward",
    variant: "default",
    shape: SHAPE,
    bytes: 5 * N * 4,
    setup(gpu) {
      const g = filled(gpu, [T, I], "f32", 4), u = filled(gpu, [T, I]), dh = filled(gpu, [T, I]);
      const dg = empty(gpu, [T, I]), du = empty(gpu, [T, I]);
      return {
        record: (batch) => swigluBackward(batch, g, u, dh, dg, du),
        release: () => releaseAll([g, u, dh, dg, du]),
      };
    },
  }];
}

registerBench("swiglu", cases);
