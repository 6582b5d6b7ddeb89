/**
 * Helpers of the generated WGSL (the register blocks that matmul.ts and attention_reg.ts write out as straight-line
 * code into `{{...}}` template slots), the WGSL pieces several shaders share, and the subgroup size those blocks are
 * laid out for.
 */
import type { Gpu } from "../gpu/device.ts";

/**
 * A shader's text with its piece slots filled: each `{{NAME}}` named in `pieces` becomes that piece's text, a file
 * of shaders/ with no entry point that several shaders share (attention_common.wgsl). Pieces go in when a module
 * imports its shaders, before the template values, so a piece may use the same `{{...}}` slots as its host. A
 * piece whose slot the source lacks (or holds twice) throws a TypeError naming it.
 *
 * @example
 * ```ts
 * withPieces("{{COMMON}}\nconst D = {{D}}u;", { COMMON: "const WG = 64u;" }); // "const WG = 64u;\nconst D = {{D}}u;"
 * ```
 */
export function withPieces(source: string, pieces: Record<string, string>): string {
  let out = source;
  for (const [name, text] of Object.entries(pieces)) {
    const parts = out.split(`{{${name}}}`);
    if (parts.length !== 2) {
      throw new TypeError(`Shader source needs exactly one {{${name}}} slot, found ${parts.length - 1}`);
    }
    out = parts.join(text);
  }
  return out;
}

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

/**
 * llvmpipe stops every loop of an invocation once that invocation has run 65535 loop iterations in all, over all
 * its loops (LP_MAX_TGSI_LOOP_ITERATIONS, one counter per invocation): past it, results are silently wrong. Kernels
 * whose loops grow with their input keep their worst case within it on CPU rasterisers.
 */
export const LOOP_BUDGET = 65535;

/**
 * A row kernel's workgroup size as asked: a power of two from 2 to 256 (its tree reduction halves it); throws a
 * RangeError naming the kernel otherwise.
 */
export function powerOfTwoWorkgroup(what: string, wg: number): number {
  if (!Number.isInteger(wg) || wg < 2 || wg > 256 || (wg & (wg - 1)) !== 0) {
    throw new RangeError(`${what} workgroup must be a power of two from 2 to 256, got ${wg}`);
  }
  return wg;
}
