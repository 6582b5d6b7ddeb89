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
  /** Storage bindings the shader declares, in binding order: whether each is writable. */
  storage: { binding: number; writable: boolean }[];
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
  /** Names the kernel in errors and timings; defaults to the shader name plus its template values. */
  label?: string;
}

const caches = new WeakMap<GPUDevice, Map<string, Kernel>>();

/** A buffer binding declared in group 0 of a shader. */
export interface DeclaredBinding {
  binding: number;
  type: GPUBufferBindingType;
}

/**
 * The group-0 buffer bindings a shader declares. The layout is built from these rather than "auto", so every
 * entry point of a shader shares one layout and a binding an entry point does not use is still bound (to a
 * placeholder), instead of silently shifting what the host must pass.
 */
export function declaredBindings(source: string): DeclaredBinding[] {
  const out: DeclaredBinding[] = [];
  const re = /@group\(0\)\s*@binding\((\d+)\)\s*var<(uniform|storage(?:,\s*(read|read_write))?)>/g;
  for (const m of source.matchAll(re)) {
    const type: GPUBufferBindingType = m[2] === "uniform"
      ? "uniform"
      : m[3] === "read_write"
      ? "storage"
      : "read-only-storage";
    out.push({ binding: Number(m[1]), type });
  }
  return out.sort((a, b) => a.binding - b.binding);
}

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
  const label = options.label ?? (options.template ? `${shader}${JSON.stringify(options.template)}` : shader);
  const declared = declaredBindings(source);
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ code: source, label });
  const bindGroupLayout = device.createBindGroupLayout({
    label,
    entries: declared.map((d) => ({
      binding: d.binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: d.type },
    })),
  });
  const pipeline = device.createComputePipeline({
    label,
    layout: device.createPipelineLayout({ bindGroupLayouts: [bindGroupLayout] }),
    compute: { module, entryPoint: options.entryPoint ?? "main", constants },
  });
  const ready = device.popErrorScope().then(async (error) => {
    if (!error) return;
    const info = await module.getCompilationInfo().catch(() => undefined);
    const lines = info?.messages.map((m) => `  line ${m.lineNum}:${m.linePos} ${m.type}: ${m.message}`) ?? [];
    throw new Error(`Shader ${shader}.wgsl (${label}) failed to build: ${error.message}\n${lines.join("\n")}`);
  });
  ready.catch(() => {}); // surfaced by whoever awaits it; never an unhandled rejection
  const storage = declared.filter((d) => d.type !== "uniform").map((d) => ({
    binding: d.binding,
    writable: d.type === "storage",
  }));
  const k: Kernel = { name: label, pipeline, bindGroupLayout, storage, params: options.params, ready };
  cache.set(key, k);
  return k;
}
