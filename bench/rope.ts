/**
 * RoPE cases: the rotation of the queries of a packed batch (T 512, H 14, D 64) in place, forward and backward
 * (the same kernel turning the other way). Positions restart at each of 2 sequences of 256, as packed.
 */
import type { Gpu } from "../src/gpu/device.ts";
import { fromHost } from "../src/gpu/tensor.ts";
import { ropeBackward, ropeForward, ropeTable } from "../src/ops/rope.ts";
import { filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { T, H, D } = QWEN;

function cases(_gpu: Gpu): BenchCase[] {
  return (["forward", "backward"] as const).map((direction) => ({
    kernel: "rope",
    variant: direction,
    shape: `T${T} H${H} D${D}`,
    // x read and written; cos and sin read once per (token, pair) at most.
    bytes: 2 * T * H * D * 4 + T * 4 + T * D * 4,
    setup(gpu) {
      const x = filled(gpu, [T, H, D]);
      const pos = fromHost(gpu, Uint32Array.from({ length: T }, (_, t) => t % 256), [T], "u32");
      const table = ropeTable(gpu, 1e6, D, 256);
      const run = direction === "forward" ? ropeForward : ropeBackward;
      return {
        record: (batch) => run(batch, { x, pos, table, heads: H }),
        release: () => releaseAll([x, pos, table.cos, table.sin]),
      };
    },
  }));
}

registerBench("rope", cases);
