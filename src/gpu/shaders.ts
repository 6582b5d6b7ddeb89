/**
 * Every WGSL file, imported as text so that a bundled or compiled program carries its shaders.
 * Add a shader here when adding it to shaders/ (a test checks that the two lists agree).
 */
import adamw_forward from "../../shaders/adamw_forward.wgsl" with { type: "text" };
import attention_backward from "../../shaders/attention_backward.wgsl" with { type: "text" };
import attention_forward from "../../shaders/attention_forward.wgsl" with { type: "text" };
import embedding_backward from "../../shaders/embedding_backward.wgsl" with { type: "text" };
import embedding_forward from "../../shaders/embedding_forward.wgsl" with { type: "text" };
import gradnorm_forward from "../../shaders/gradnorm_forward.wgsl" with { type: "text" };
import kvcache_forward from "../../shaders/kvcache_forward.wgsl" with { type: "text" };
import logprob_entropy_backward from "../../shaders/logprob_entropy_backward.wgsl" with { type: "text" };
import logprob_entropy_forward from "../../shaders/logprob_entropy_forward.wgsl" with { type: "text" };
import policy_loss_forward from "../../shaders/policy_loss_forward.wgsl" with { type: "text" };
import rmsnorm_backward from "../../shaders/rmsnorm_backward.wgsl" with { type: "text" };
import rmsnorm_forward from "../../shaders/rmsnorm_forward.wgsl" with { type: "text" };
import rope_forward from "../../shaders/rope_forward.wgsl" with { type: "text" };
import sample_forward from "../../shaders/sample_forward.wgsl" with { type: "text" };
import swiglu_backward from "../../shaders/swiglu_backward.wgsl" with { type: "text" };
import swiglu_forward from "../../shaders/swiglu_forward.wgsl" with { type: "text" };
import matmul_forward from "../../shaders/matmul_forward.wgsl" with { type: "text" };
import matmul_backward from "../../shaders/matmul_backward.wgsl" with { type: "text" };

const SOURCES = {
  adamw_forward,
  attention_backward,
  attention_forward,
  embedding_backward,
  embedding_forward,
  gradnorm_forward,
  kvcache_forward,
  logprob_entropy_backward,
  logprob_entropy_forward,
  policy_loss_forward,
  rmsnorm_backward,
  rmsnorm_forward,
  rope_forward,
  sample_forward,
  swiglu_backward,
  swiglu_forward,
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
