/**
 * Adapter and device: one GPU handle per process, with the adapter's own limits and every useful feature it has.
 *
 * The WebGPU default limits (256 MiB buffers, 128 MiB bindings, 16 KiB workgroup memory, 8 storage buffers per
 * stage) are far too small for real models, so the device asks for everything the adapter offers.
 */
import { bucketFloor } from "./pool.ts";

/** What the device can do, decided once when it is created. */
export interface GpuFeatures {
  /** `shader-f16`: f16 storage and arithmetic in WGSL (`enable f16;`). */
  f16: boolean;
  /** `subgroups`: `subgroupAdd` and friends. Deno accepts it even where `adapter.features` does not list it. */
  subgroups: boolean;
  /** `timestamp-query`: GPU timings for the benchmarks. */
  timestamps: boolean;
  /**
   * Whether the shader compiler wants `enable subgroups;` before a module uses subgroup builtins: browsers' (Tint)
   * require it, Deno's (naga) refuses it. The pipeline cache adds it where wanted.
   */
  subgroupsDirective?: boolean;
}

/** A WebGPU device with the facts about its adapter that kernels and tuning tables need. */
export interface Gpu {
  /** The adapter the device came from. */
  adapter: GPUAdapter;
  /** The device every tensor and kernel of this Gpu lives on. */
  device: GPUDevice;
  /** The adapter's vendor, architecture and description. */
  info: GPUAdapterInfo;
  /** The optional features the device was created with. */
  features: GpuFeatures;
  /** The device's limits, as requested (the adapter's largest buffers and bindings). */
  limits: GPUSupportedLimits;
  /** True on CPU rasterisers (Mesa llvmpipe/lavapipe, SwiftShader, WARP). */
  software: boolean;
  /** `adapter.info.description`, or a fallback when it is empty. */
  name: string;
  /**
   * The most bytes one tensor keeps in one buffer: the smaller of `maxStorageBufferBindingSize` and the largest
   * pool bucket within `maxBufferSize`, or less where asked ({@linkcode GpuOptions.tensorLimit},
   * {@linkcode withTensorLimit}). The model's matrices past it are split by rows (src/gpu/split.ts).
   */
  tensorLimit: number;
}

/** Options for {@linkcode requestGpu}. */
export interface GpuOptions {
  /** Passed to `navigator.gpu.requestAdapter`: high-performance or low-power. */
  powerPreference?: GPUPowerPreference;
  /** Refuse software adapters (for benchmarks that must run on a real GPU). */
  requireHardware?: boolean;
  /** Do not request these features even when available (to test fallbacks). */
  disable?: (keyof GpuFeatures)[];
  /**
   * A smaller tensor limit than the adapter's, in bytes, so that tensors split (tests). Default: the environment
   * variable CRUCIBLE_TENSOR_LIMIT where set, else the adapter's own.
   */
  tensorLimit?: number;
}

/** The environment variable that lowers the tensor limit of every GPU this process creates (to test splitting). */
export const TENSOR_LIMIT_ENV = "CRUCIBLE_TENSOR_LIMIT";

export const NO_ADAPTER_HINT = "On a machine without a GPU, install Mesa's software Vulkan driver " +
  "(`sudo apt-get install -y mesa-vulkan-drivers`); with a GPU, install its Vulkan driver, check it with " +
  "`vulkaninfo --summary`, and try DENO_WEBGPU_BACKEND=vulkan.";

const LIMIT_NAMES = [
  "maxBufferSize",
  "maxStorageBufferBindingSize",
  "maxUniformBufferBindingSize",
  "maxStorageBuffersPerShaderStage",
  "maxUniformBuffersPerShaderStage",
  "maxBindingsPerBindGroup",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxDynamicStorageBuffersPerPipelineLayout",
  "maxDynamicUniformBuffersPerPipelineLayout",
] as const;

let shared: Promise<Gpu> | undefined;

/**
 * The process-wide GPU, created on first use.
 *
 * @example
 * ```ts
 * const gpu = await getGpu();
 * console.log(gpu.name, gpu.features.f16);
 * ```
 */
export function getGpu(): Promise<Gpu> {
  shared ??= requestGpu().catch((err) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

/** Whether any WebGPU adapter can be found, without creating a device. */
export async function hasAdapter(): Promise<boolean> {
  if (typeof navigator === "undefined" || !navigator.gpu) return false;
  quietMesa();
  try {
    return (await navigator.gpu.requestAdapter()) !== null;
  } catch {
    return false;
  }
}

/** Creates a device on the best adapter with its own limits and the features Crucible uses. */
export async function requestGpu(options: GpuOptions = {}): Promise<Gpu> {
  if (typeof navigator === "undefined" || !navigator.gpu) {
    throw new Error(`WebGPU is not available in this runtime (navigator.gpu is missing). ${NO_ADAPTER_HINT}`);
  }
  quietMesa();
  const adapter = await navigator.gpu.requestAdapter({
    powerPreference: options.powerPreference ?? "high-performance",
  });
  if (!adapter) throw new Error(`No WebGPU adapter was found. ${NO_ADAPTER_HINT}`);
  const info = adapter.info;
  // Chromium names SwiftShader in the architecture and leaves the description empty.
  const software = info.isFallbackAdapter ||
    /llvmpipe|lavapipe|swiftshader|warp|software/i.test(`${info.description} ${info.architecture}`);
  const name = info.description || `${info.vendor} ${info.architecture || info.device}`.trim() || "unknown adapter";
  if (options.requireHardware && software) {
    throw new Error(
      `The adapter "${name}" is a software rasteriser and a hardware GPU was required. ${NO_ADAPTER_HINT}`,
    );
  }
  const requiredLimits: Record<string, number> = {};
  for (const key of LIMIT_NAMES) {
    const value = (adapter.limits as unknown as Record<string, number | undefined>)[key];
    if (typeof value === "number") requiredLimits[key] = value;
  }
  const disabled = new Set(options.disable ?? []);
  const wanted: [keyof GpuFeatures, GPUFeatureName][] = [
    ["f16", "shader-f16"],
    ["timestamps", "timestamp-query"],
  ];
  const features = wanted.filter(([k, f]) => !disabled.has(k) && adapter.features.has(f)).map(([, f]) => f);
  // `subgroups` is often missing from adapter.features yet accepted by requestDevice: try it, fall back without.
  let device: GPUDevice | undefined;
  if (!disabled.has("subgroups")) {
    try {
      device = await adapter.requestDevice({
        requiredFeatures: [...features, "subgroups" as GPUFeatureName],
        requiredLimits,
      });
    } catch {
      device = undefined;
    }
  }
  device ??= await adapter.requestDevice({ requiredFeatures: features, requiredLimits });
  reportLoss(device, name);
  if (software) hintLavapipe();
  const own = Math.min(device.limits.maxStorageBufferBindingSize, bucketFloor(device.limits.maxBufferSize));
  const asked = options.tensorLimit ?? envLimit();
  let tensorLimit = own;
  try {
    if (asked !== undefined) tensorLimit = checkLimit(asked, own, options.tensorLimit === undefined);
  } catch (e) {
    device.destroy(); // a refused limit leaves no device behind
    throw e;
  }
  return {
    adapter,
    device,
    info,
    name,
    software,
    limits: device.limits,
    tensorLimit,
    features: {
      f16: device.features.has("shader-f16"),
      subgroups: device.features.has("subgroups" as GPUFeatureName),
      timestamps: device.features.has("timestamp-query"),
      subgroupsDirective: device.features.has("subgroups" as GPUFeatureName) && await acceptsSubgroupsDirective(device),
    },
  };
}

/** Whether the device's shader compiler accepts the `enable subgroups;` directive (one tiny module, compiled once). */
async function acceptsSubgroupsDirective(device: GPUDevice): Promise<boolean> {
  device.pushErrorScope("validation");
  device.createShaderModule({ code: "enable subgroups;\n@compute @workgroup_size(1) fn main() {}" });
  return (await device.popErrorScope()) === null;
}

/**
 * The same device with a smaller tensor limit: tensors created through the returned handle split past `bytes`
 * (pipelines and the buffer pool are per device, so both handles share them).
 *
 * @example
 * ```ts
 * const small = withTensorLimit(await getGpu(), 4096); // the tiny test models' matrices split into row parts
 * ```
 */
export function withTensorLimit(gpu: Gpu, bytes: number): Gpu {
  return { ...gpu, tensorLimit: checkLimit(bytes, gpu.tensorLimit, false) };
}

function checkLimit(bytes: number, own: number, fromEnv: boolean): number {
  const what = fromEnv ? `${TENSOR_LIMIT_ENV}=${bytes}` : `Tensor limit ${bytes}`;
  if (!Number.isInteger(bytes) || bytes < 4 || bytes % 4 !== 0) {
    throw new RangeError(`${what} must be a positive multiple of 4 bytes`);
  }
  if (bytes > own) throw new RangeError(`${what} exceeds the adapter's own limit of ${own} bytes; use at most that`);
  return bytes;
}

function envLimit(): number | undefined {
  let text: string | undefined;
  try {
    text = Deno.env.get(TENSOR_LIMIT_ENV);
  } catch {
    return undefined; // without --allow-env there is no override
  }
  return text === undefined || text === "" ? undefined : Number(text);
}

/** One loud report when the device is lost for any reason but an explicit destroy(). */
function reportLoss(device: GPUDevice, name: string): void {
  device.lost.then((info) => {
    if (info.reason === "destroyed") return;
    console.error(
      `\n*** The WebGPU device on "${name}" was lost (${info.reason}): ${info.message}\n` +
        "*** Every GPU buffer is gone; the current step cannot finish. Restart from the last checkpoint.\n",
    );
  });
}

/**
 * On Linux without a Vulkan driver, wgpu falls back to Mesa's OpenGL rasteriser: it works, but about 8x slower than
 * lavapipe and without shader-f16. Say how to fix it, once.
 */
function hintLavapipe(): void {
  if (Deno.build.os !== "linux") return;
  for (const dir of ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]) {
    try {
      for (const e of Deno.readDirSync(dir)) if (e.name.endsWith(".json")) return;
    } catch {
      // A missing or unreadable folder holds no driver we can see; keep looking.
    }
  }
  console.warn(
    "WebGPU is running on Mesa's OpenGL fallback, about 8x slower than its Vulkan driver: install it with " +
      "`apt-get install -y mesa-vulkan-drivers` (or run `bash .ci/setup`).",
  );
}

/** Mesa warns on every start when XDG_RUNTIME_DIR is unset; point it at the temp folder. */
function quietMesa(): void {
  try {
    if (!Deno.env.get("XDG_RUNTIME_DIR")) Deno.env.set("XDG_RUNTIME_DIR", Deno.env.get("TMPDIR") ?? "/tmp");
  } catch {
    // Without --allow-env the warning stays; harmless.
  }
}
