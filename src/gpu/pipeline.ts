/**
 * Compute pipelines, cached per device. Each is created inside a validation error scope; a failure is rethrown
 * with the shader's file name when the batch that uses it is submitted (pipeline creation itself is synchronous).
 */
import type { Gpu } from "./device.ts";
import { type ShaderName, shaderSource } from "./shaders.ts";
import { checkParams, type UniformLayout } from "./uniforms.ts";

/** A compiled compute pipeline with what a dispatch needs to bind it. */
export interface Kernel {
  /** `<shader>` plus its template values, for error messages and timings. */
  name: string;
  pipeline: GPUComputePipeline;
  bindGroupLayout: GPUBindGroupLayout;
  params?: UniformLayout;
  /** Resolves when the shader and pipeline validated; rejects with an Error naming the shader file. */
  ready: Promise<void>;
}

/** How to build a kernel from a shader file. */
export interface KernelOptions {
  /** The `struct Params` declaration of the shader (binding 0); omitted when the shader has none. */
  params?: UniformLayout;
  /** Values substituted for `{{NAME}}` placeholders: only compile-time constants such as tile shapes. */
  template?: Record<string, string | number>;
  /** Pipeline-overridable constants (`override NAME: T;`). */
  constants?: Record<string, number | boolean>;
  entryPoint?: string;
}

const caches = new WeakMap<GPUDevice, Map<string, Kernel>>();

/** Replaces `{{NAME}}` placeholders; throws when one is left without a value. */
export function fillTemplate(shader: string, source: string, values: Record<string, string | number> = {}): string {
  const filled = source.replace(/\{\{(\w+)\}\}/g, (_whole, key: string) => {
    if (!(key in values)) throw new TypeError(`Shader ${shader}.wgsl needs a template value for {{${key}}}`);
    return String(values[key]);
  });
  return filled;
}

/**
 * The kernel for a shader with the given template and constants, compiled on first request.
 *
 * @example
 * ```ts
 * const k = kernel(gpu, "add_forward", { params: uniforms([["n", "u32"]]) });
 * await k.ready;
 * ```
 */
export function kernel(gpu: Gpu, shader: ShaderName, options: KernelOptions = {}): Kernel {
  const key = `${shader}|${JSON.stringify(options.template ?? {})}|${JSON.stringify(options.constants ?? {})}|${
    options.entryPoint ?? "main"
  }`;
  let cache = caches.get(gpu.device);
  if (!cache) {
    cache = new Map();
    caches.set(gpu.device, cache);
  }
  const hit = cache.get(key);
  if (hit) return hit;
  const source = fillTemplate(shader, shaderSource(shader), options.template);
  checkParams(shader, source, options.params);
  const device = gpu.device;
  // Deno's types take numbers only; a bool override reads any nonzero number as true.
  const constants = Object.fromEntries(
    Object.entries(options.constants ?? {}).map(([k, v]) => [k, typeof v === "boolean" ? Number(v) : v]),
  );
  const label = options.template ? `${shader}${JSON.stringify(options.template)}` : shader;
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: source, label });
  const pipeline = device.createComputePipeline({
    label,
    layout: "auto",
    compute: { module, entryPoint: options.entryPoint ?? "main", constants },
  });
  const bindGroupLayout = pipeline.getBindGroupLayout(0);
  const ready = device.popErrorScope().then(async (error) => {
    if (!error) return;
    const info = await module.getCompilationInfo().catch(() => undefined);
    const lines = info?.messages.map((m) => `  line ${m.lineNum}:${m.linePos} ${m.type}: ${m.message}`) ?? [];
    throw new Error(`Shader ${shader}.wgsl (${label}) failed to build: ${error.message}\n${lines.join("\n")}`);
  });
  ready.catch(() => {}); // surfaced by whoever awaits it; never an unhandled rejection
  const k: Kernel = { name: label, pipeline, bindGroupLayout, params: options.params, ready };
  cache.set(key, k);
  return k;
}
