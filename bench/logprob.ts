/**
 * Fused log-softmax cases: per-row log-probability of a target, entropy and log-sum-exp, and the backward written
 * over the logits. Two shapes: one LM-head chunk of Qwen's vocabulary (V 151936, as many rows as the model's head
 * puts in one chunk on this adapter), the old tiny model's vocabulary (V 796) over a micro-batch of 8192 tokens, and
 * the shipped base model's (V 1858) over 4096. The forward at workgroups of 16, 64 and 256.
 */
import { Batch } from "../src/gpu/batch.ts";
import type { Gpu } from "../src/gpu/device.ts";
import { empty, fromHost, type Tensor } from "../src/gpu/tensor.ts";
import { headChunkRows } from "../src/model/head.ts";
import { logprobBackward, logprobForward, pickLogprobWorkgroup } from "../src/ops/logprob.ts";
import { constant, normals, QWEN, releaseAll, tokenIds } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

interface Rows {
  N: number;
  V: number;
}

/** Logits of N(0, 2), targets, and the per-row outputs of a forward already run (the backward's inputs). */
function inputs(gpu: Gpu, { N, V }: Rows) {
  const logits = fromHost(gpu, normals(N * V, 2, 5), [N, V]);
  const target = fromHost(gpu, tokenIds(N, V, 6), [N], "u32");
  const logp = empty(gpu, [N]), entropy = empty(gpu, [N]), lse = empty(gpu, [N]);
  return { logits, target, logp, entropy, lse };
}

function cases(gpu: Gpu): BenchCase[] {
  const shapes: Rows[] = [
    { N: headChunkRows(QWEN.T, QWEN.V, gpu.limits.maxStorageBufferBindingSize), V: QWEN.V },
    { N: 8192, V: 796 },
    { N: 4096, V: 1858 },
  ];
  return shapes.flatMap((s): BenchCase[] => [
    ...[16, 64, 256].map((workgroup): BenchCase => ({
      kernel: "logprob_entropy_forward",
      variant: `wg${workgroup}`,
      shape: `N${s.N} V${s.V}`,
      // One read of the logits (the kernel makes one pass: max, sum and entropy online).
      bytes: s.N * s.V * 4 + s.N * 16,
      picked: workgroup === pickLogprobWorkgroup(gpu, s.V),
      setup(gpu) {
        const t = inputs(gpu, s);
        return {
          record: (batch) => logprobForward(batch, { ...t, workgroup }),
          release: () => releaseAll(Object.values(t)),
        };
      },
    })),
    {
      kernel: "logprob_entropy_backward",
      variant: "default",
      shape: `N${s.N} V${s.V}`,
      // Logits read, their gradient written over them.
      bytes: 2 * s.N * s.V * 4 + s.N * 20,
      async setup(gpu) {
        const t = inputs(gpu, s);
        const batch = new Batch(gpu);
        logprobForward(batch, t);
        await batch.submit();
        const dlogp: Tensor = constant(gpu, [s.N], -1 / s.N), dentropy = constant(gpu, [s.N], 0);
        return {
          // Runs after the first see their own output as logits: other values, the same work.
          record: (batch) => logprobBackward(batch, { ...t, dlogp, dentropy }),
          release: () => releaseAll([...Object.values(t), dlogp, dentropy]),
        };
      },
    },
  ]);
}

registerBench("logprob", cases);
