/**
 * RMSNorm cases on a packed batch of Qwen2.5-0.5B's width (T 512 x C 896): the plain forward, the forward fused
 * with the residual add before it, and the backward into the input and the weight (two dispatches).
 */
import type { Gpu } from "../src/gpu/device.ts";
import { empty } from "../src/gpu/tensor.ts";
import { pickRmsnormWorkgroup, rmsnormBackward, rmsnormForward } from "../src/ops/rmsnorm.ts";
import { constant, filled, QWEN, releaseAll } from "./inputs.ts";
import { type BenchCase, registerBench } from "./registry.ts";

const { T, C } = QWEN;
const SHAPE = `T${T} C${C}`;
const ROW = T * C * 4;
/** The workgroup sizes timed: a CPU rasteriser's subgroup and up to a GPU's usual 64. */
const WORKGROUPS = [4, 8, 16, 32, 64];

function cases(gpu: Gpu): BenchCase[] {
  const pick = pickRmsnormWorkgroup(gpu);
  const forward = (fused: boolean, workgroup: number): BenchCase => ({
    kernel: "rmsnorm_forward",
    variant: `${fused ? "add" : "plain"} wg${workgroup}`,
    shape: SHAPE,
    picked: workgroup === pick,
    // x (and add) read, y (and sum) written.
    bytes: (fused ? 4 : 2) * ROW + C * 4 + T * 4,
    setup(gpu) {
      const x = filled(gpu, [T, C]), w = constant(gpu, [C], 1), y = empty(gpu, [T, C]), rstd = empty(gpu, [T]);
      const extra = fused ? { add: filled(gpu, [T, C], "f32", 0.5), sum: empty(gpu, [T, C]) } : {};
      return {
        record: (batch) => rmsnormForward(batch, { x, w, y, rstd, eps: 1e-6, ...extra, workgroup }),
        release: () => releaseAll([x, w, y, rstd, ...Object.values(extra)]),
      };
    },
  });
  const backward = (workgroup: number): BenchCase => ({
    kernel: "rmsnorm_backward",
    variant: `dx+dw wg${workgroup}`,
    shape: SHAPE,
    picked: workgroup === pick,
    // dy and r read, dr written (the dw pass reads dy and r again).
    bytes: 3 * ROW + 2 * C * 4 + T * 4,
    setup(gpu) {
      const dy = filled(gpu, [T, C]), r = filled(gpu, [T, C], "f32", 2), w = constant(gpu, [C], 1);
      const rstd = constant(gpu, [T], 1.5), dr = empty(gpu, [T, C]), dw = empty(gpu, [C]);
      return {
        record: (batch) => rmsnormBackward(batch, { dy, r, w, rstd, dr, dw, workgroup }),
        release: () => releaseAll([dy, r, w, rstd, dr, dw]),
      };
    },
  });
  return WORKGROUPS.flatMap((wg) => [forward(false, wg), forward(true, wg), backward(wg)]);
}

registerBench("rmsnorm", cases);
