/**
 * Every WGSL file, imported as text so that a bundled or compiled program carries its shaders.
 * Add a shader here when adding it to shaders/ (a test checks that the two lists agree).
 */
import matmul_forward from "../../shaders/matmul_forward.wgsl" with { type: "text" };
import matmul_backward from "../../shaders/matmul_backward.wgsl" with { type: "text" };

const SOURCES = {
  matmul_forward,
  matmul_backward,
} as const;

/** The file name (without `.wgsl`) of a shader in shaders/. */
export type ShaderName = keyof typeof SOURCES;

/** Names of all shaders. */
export const SHADER_NAMES = Object.keys(SOURCES) as ShaderName[];

/** The WGSL text of a shader. */
export function shaderSource(name: ShaderName): string {
  const source = SOURCES[name];
  if (source === undefined) {
    throw new RangeError(`Unknown shader "${name}"; the shaders are ${SHADER_NAMES.join(", ")}`);
  }
  return source;
}
