/**
 * Helpers of the generated WGSL (the register blocks that matmul.ts and attention_reg.ts write out as straight-line
 * code into `{{...}}` template slots) and the subgroup size those blocks are laid out for.
 */
import type { Gpu } from "../gpu/device.ts";

/** The numbers 0 .. n - 1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/**
 * Generated WGSL statements as the text of one template slot: one per line, every line after the first indented by
 * `spaces` (the slot's own column in the shader supplies the first line's indent).
 *
 * @example
 * ```ts
 * slotLines(["let a = 1u;", "let b = 2u;"], 2); // "let a = 1u;\n  let b = 2u;"
 * ```
 */
export function slotLines(lines: string[], spaces: number): string {
  return lines.join(`\n${" ".repeat(spaces)}`);
}

/**
 * The adapter's subgroup size when it is one fixed size from 4 to 64, else 0 (no subgroups, or a size that varies
 * between dispatches). A register kernel sized by it runs one subgroup per workgroup, whose lanes can share loads
 * through subgroupBroadcast. lavapipe: 8, or 16 with AVX-512.
 */
export function fixedSubgroupSize(gpu: Gpu): number {
  const min = gpu.info.subgroupMinSize ?? 0;
  const max = gpu.info.subgroupMaxSize ?? 0;
  return gpu.features.subgroups && min === max && min >= 4 && min <= 64 ? min : 0;
}

/**
 * Template values of the lane slots `{{LANES}}` (invocations per workgroup) and `{{LANE_ID}}` (the builtin a lane
 * reads its index from): the subgroup's own index where the workgroup is one subgroup sharing loads, the
 * workgroup's otherwise.
 */
export function laneSlots(lanes: number, subgroup: boolean): { LANES: number; LANE_ID: string } {
  return { LANES: lanes, LANE_ID: subgroup ? "subgroup_invocation_id" : "local_invocation_index" };
}
