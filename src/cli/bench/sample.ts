/**
 * Sampler cases over Qwen's vocabulary (V 151936) for a decode step of 32 sequences: greedy, plain sampling at
 * temperature 1, and top-p 0.9. Logits are N(0, 3), as in the measurements of the shader's header; the top-p
 * search's step count depends on them.
 */
import type { Gpu } from "../../gpu/device.ts";
import { Rng } from "../../util/random.ts";
import { empty, fromHost } from "../../gpu/tensor.ts";
import { drawUniforms, sample, type SampleSettings } from "../../ops/sample.ts";
import { normals, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const N = 32, V = QWEN.V;

const SETTINGS: [string, SampleSettings][] = [
  ["greedy", { temperature: 0 }],
  ["t1", { temperature: 1 }],
  ["top-p 0.9", { temperature: 1, topP: 0.9 }],
];

function cases(_gpu: Gpu): BenchCase[] {
  return SETTINGS.map(([variant, settings]): BenchCase => ({
    kernel: "sample",
    variant,
    shape: `N${N} V${V}`,
    // One pass over the logits at least (greedy makes 2, top-p about 10: see the shader's header).
    bytes: N * V * 4,
    setup(gpu) {
      const logits = fromHost(gpu, normals(N * V, 3, 9), [N, V]);
      const uniform = fromHost(gpu, drawUniforms(new Rng(3), N), [N]);
      const ids = empty(gpu, [N], "u32"), logprob = empty(gpu, [N]);
      return {
        record: (batch) => sample(batch, { ...settings, logits, uniform, ids, logprob }),
        release: () => releaseAll([logits, uniform, ids, logprob]),
      };
    },
  }));
}

registerBench("sample", cases);
