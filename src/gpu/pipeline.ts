/**
 * Compute pipelines, in one cache per device. The runtime knows no shader: each op module imports its own WGSL as
 * text and hands it over as a {@linkcode Shader}. Each pipeline is created inside a validation error scope; a
 * failure is rethrown with the shader's file name when the batch that uses it is submitted (pipeline creation
 * itself is synchronous).
 */
import type { Gpu } from "./device.ts";
import { checkParams, type UniformLayout } from "./uniforms.ts";

/**
 * A WGSL shader: its text and the name of its file in shaders/ without `.wgsl`, which names it in errors and keys
 * its pipelines (one name, one text).
 *
 * @example
 * ```ts
 * // source: shaders/swiglu_forward.wgsl, which the op's module imports `with { type: "text" }`
 * const SWIGLU: Shader = { name: "swiglu_forward", source };
 * ```
 */
export interface Shader {
  /** The shader's file name without `.wgsl`, for errors and timings. */
  name: string;
  /** The WGSL text (imported with `{ type: "text" }`). */
  source: string;
}

/** A compiled compute pipeline with what a dispatch needs to bind it. */
export interface Kernel {
  /** `<shader>` plus its template values, for error messages and timings. */
  name: string;
  /** The compute pipeline. */
  pipeline: GPUComputePipeline;
  /** The layout of its bind group: uniforms at binding 0, then the storage bindings. */
  bindGroupLayout: GPUBindGroupLayout;
  /**
   * Storage bindings of its layout, in binding order: whether each is writable. Those the shader declares, or the
   * entry point's own where it names them ({@linkcode KernelOptions.bindings}).
   */
  storage: { binding: number; writable: boolean }[];
  /** The highest storage binding the shader declares: a dispatch passes at most this many buffers. */
  slots: number;
  /** The layout of its uniforms (binding 0), when it has any. */
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
  /** The shader function to run; default `main`. */
  entryPoint?: string;
  /** Names the kernel in errors and timings; defaults to the shader name plus its template values. */
  label?: string;
  /**
   * The storage bindings the entry point uses, where it uses fewer than the shader declares: only these enter its
   * layout, so that it fits the device's storage buffers per stage (browsers allow 10) when the shader's entry
   * points together bind more. Default: every binding the shader declares.
   */
  bindings?: readonly number[];
}

const caches = new WeakMap<GPUDevice, Map<string, Kernel>>();

/** What a browser's compiler needs before a module that uses subgroups (see GpuFeatures.subgroupsDirective). */
const SUBGROUPS_PREAMBLE = "enable subgroups;\ndiagnostic(off, subgroup_uniformity);\n";

/**
 * The kernel cached on this device under `key`, built on first request: the one pipeline cache. {@linkcode kernel}
 * keys its entries `<shader>|<template>|<constants>|<entry point>`; an op whose template is costly to generate
 * caches the finished kernel again under a short key of its own (without `|`, naming the shader first), so a
 * dispatch skips building and hashing the template.
 *
 * @example
 * ```ts
 * const k = cachedKernel(gpu, `matmul_forward ${v.name}`, () => kernel(gpu, MATMUL, { template: slots(v) }));
 * ```
 */
export function cachedKernel(gpu: Gpu, key: string, build: () => Kernel): Kernel {
  let cache = caches.get(gpu.device);
  if (!cache) caches.set(gpu.device, cache = new Map());
  let k = cache.get(key);
  if (!k) cache.set(key, k = build());
  return k;
}

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
 * The kernel for a shader with the given template and constants, compiled on first request (cached per device).
 *
 * @example
 * ```ts
 * const k = kernel(gpu, { name: "add_forward", source }, { params: uniforms([["n", "u32"]]) });
 * await k.ready;
 * ```
 */
export function kernel(gpu: Gpu, shader: Shader, options: KernelOptions = {}): Kernel {
  const key = `${shader.name}|${JSON.stringify(options.template ?? {})}|${JSON.stringify(options.constants ?? {})}|${
    options.entryPoint ?? "main"
  }${options.bindings ? `|${options.bindings.join(",")}` : ""}`;
  return cachedKernel(gpu, key, () => compile(gpu, shader, options));
}

/** Builds the pipeline of {@linkcode kernel}, inside a validation error scope. */
function compile(gpu: Gpu, shader: Shader, options: KernelOptions): Kernel {
  const { name } = shader;
  const filled = fillTemplate(name, shader.source, options.template);
  // A browser's compiler (Tint) wants the directive before subgroup builtins, and its uniformity analysis cannot see
  // that the reg kernels' loops run in step across a subgroup (their bounds are subgroup reductions); Deno's (naga)
  // refuses the directive and does no such analysis.
  const source = gpu.features.subgroupsDirective ? `${SUBGROUPS_PREAMBLE}${filled}` : filled;
  checkParams(name, source, options.params);
  const device = gpu.device;
  // Deno's types take numbers only; a bool override reads any nonzero number as true.
  const constants = Object.fromEntries(
    Object.entries(options.constants ?? {}).map(([k, v]) => [k, typeof v === "boolean" ? Number(v) : v]),
  );
  const label = options.label ?? (options.template ? `${name}${JSON.stringify(options.template)}` : name);
  const all = declaredBindings(source);
  const declared = options.bindings
    ? all.filter((d) => d.type === "uniform" || options.bindings!.includes(d.binding))
    : all;
  const missing = options.bindings?.filter((b) => !all.some((d) => d.binding === b && d.type !== "uniform")) ?? [];
  if (missing.length > 0) {
    throw new TypeError(`Shader ${name}.wgsl declares no storage binding ${missing.join(", ")} (${label})`);
  }
  const slots = Math.max(0, ...all.filter((d) => d.type !== "uniform").map((d) => d.binding));
  const perStage = declared.filter((d) => d.type !== "uniform").length;
  if (perStage > gpu.limits.maxStorageBuffersPerShaderStage) {
    throw new RangeError(
      `Shader ${name}.wgsl (${label}) binds ${perStage} storage buffers, and this device allows ` +
        `${gpu.limits.maxStorageBuffersPerShaderStage} per shader stage (maxStorageBuffersPerShaderStage)`,
    );
  }
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
    throw new Error(`Shader ${name}.wgsl (${label}) failed to build: ${error.message}\n${lines.join("\n")}`);
  });
  ready.catch(() => {}); // surfaced by whoever awaits it; never an unhandled rejection
  const storage = declared.filter((d) => d.type !== "uniform").map((d) => ({
    binding: d.binding,
    writable: d.type === "storage",
  }));
  return { name: label, pipeline, bindGroupLayout, storage, slots, params: options.params, ready };
}
