/**
 * Sampler cases over Qwen's vocabulary (V 151936) for a decode step of 32 sequences: greedy, plain sampling at
 * temperature 1, and top-p 0.9; and at the main job's rollout shape (64 sequences, the tiny model's V 1858), greedy
 * and temperature 1. Each at every workgroup size the sampler offers (on CPU rasterisers, those within llvmpipe's
 * loop budget). Logits are N(0, 3), as in the measurements of the shader's header; the top-p search's step count
 * depends on them.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { Rng } from "../src/util/random.ts";
import { empty, fromHost } from "../src/gpu/tensor.ts";
import {
  drawUniforms,
  pickSampleWorkgroup,
  sample,
  SAMPLE_WORKGROUPS,
  sampleLoopSteps,
  type SampleSettings,
} from "../src/ops/sample.ts";
import { LOOP_BUDGET } from "../src/ops/wgsl.ts";
import { normals, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const N = 32, V = QWEN.V;

const SETTINGS: [string, SampleSettings][] = [
  ["greedy", { temperature: 0 }],
  ["t1", { temperature: 1 }],
  ["top-p 0.9", { temperature: 1, topP: 0.9 }],
];

function cases(gpu: Gpu): BenchCase[] {
  const out: BenchCase[] = [];
  for (const [n, v, settings] of [[N, V, SETTINGS], [64, 1858, SETTINGS.slice(0, 2)]] as const) {
    const pick = pickSampleWorkgroup(gpu, v);
    for (const [name, s] of settings) {
      for (const workgroup of SAMPLE_WORKGROUPS.filter((w) => !gpu.software || sampleLoopSteps(v, w) <= LOOP_BUDGET)) {
        out.push({
          kernel: "sample",
          variant: `${name} wg${workgroup}`,
          shape: `N${n} V${v}`,
          // One pass over the logits at least (greedy makes 2, top-p about 10: see the shader's header).
          bytes: n * v * 4,
          picked: workgroup === pick,
          setup(gpu) {
            const logits = fromHost(gpu, normals(n * v, 3, 9), [n, v]);
            const uniform = fromHost(gpu, drawUniforms(new Rng(3), n), [n]);
            const ids = empty(gpu, [n], "u32"), logprob = empty(gpu, [n]);
            return {
              record: (batch) => sample(batch, { ...s, logits, uniform, ids, logprob, workgroup }),
              release: () => releaseAll([logits, uniform, ids, logprob]),
            };
          },
        });
      }
    }
  }
  return out;
}

registerBench("sample", cases);
