/**
 * onnxruntime-web under Deno: the npm package imported on first use (by a specifier held in a variable, so that
 * `deno cache` of the program never installs its 140 MB; only the commands run under src/onnx/deno.lock load it),
 * and sessions over exported models on its wasm backend (CPU) or its WebGPU backend. The types below are the few parts of its API Crucible uses, so the
 * same code runs against the package in Deno and against its browser build in `deno task play`'s page.
 */

/** The pinned package; src/onnx/deno.lock (the ONNX commands' lock) and tests/deno.lock pin its integrity. */
export const ORT_WEB = "npm:onnxruntime-web@1.30.0";

/**
 * The lock of the commands that run ONNX models, relative to the repository root: deno.lock's packages, this one and
 * onnx-proto. Kept apart from deno.lock because Deno installs every package of the lock it runs under.
 */
export const ONNX_LOCK = "src/onnx/deno.lock";

/** The lock of `deno task export`, which writes ONNX but runs none: deno.lock's packages and onnx-proto. */
export const EXPORT_LOCK = "src/onnx/export.lock";

/** A tensor as onnxruntime-web hands it out and takes it in. */
export interface OrtTensor {
  readonly type: string;
  readonly dims: readonly number[];
  readonly data: unknown;
}

/** An inference session. */
export interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}

/** The parts of the `onnxruntime-web` module Crucible uses. */
export interface OrtModule {
  Tensor: new (type: string, data: Float32Array | BigInt64Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: {
    create(model: Uint8Array, options?: Record<string, unknown>): Promise<OrtSession>;
  };
  env: { wasm: { numThreads?: number; wasmPaths?: unknown }; logLevel?: string };
}

/** Which onnxruntime-web backend runs the model. */
export type OrtBackend = "wasm" | "webgpu";

const modules = new Map<OrtBackend, Promise<OrtModule>>();

/**
 * The onnxruntime-web module for a backend. The wasm build runs single-threaded here: Deno's workers would
 * compete with the rest of the process for the same cores, and one thread keeps results reproducible.
 */
export function loadOrt(backend: OrtBackend = "wasm"): Promise<OrtModule> {
  let m = modules.get(backend);
  if (!m) {
    const spec = backend === "webgpu" ? `${ORT_WEB}/webgpu` : ORT_WEB;
    m = (import(spec) as Promise<OrtModule & { default?: OrtModule }>).then((mod) => {
      const ort = mod.InferenceSession ? mod : mod.default!;
      ort.env.wasm.numThreads = 1;
      ort.env.logLevel = "error";
      return ort;
    });
    modules.set(backend, m);
  }
  return m;
}

/**
 * A session over an exported model's bytes.
 *
 * @example
 * ```ts
 * const session = await createSession(await Deno.readFile("out/onnx/model.onnx"));
 * ```
 */
export async function createSession(model: Uint8Array, backend: OrtBackend = "wasm"): Promise<OrtSession> {
  const ort = await loadOrt(backend);
  try {
    return await ort.InferenceSession.create(model, {
      executionProviders: [backend],
      graphOptimizationLevel: "all",
      logSeverityLevel: 3,
    });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new Error(`onnxruntime-web (${backend} backend) could not load the model: ${message}`);
  }
}

/** The directory of onnxruntime-web's browser files (ort.wasm.bundle.min.mjs and its .wasm), installing it. */
export async function ortDistDir(): Promise<string> {
  await loadOrt("wasm");
  const url = import.meta.resolve(`${ORT_WEB}/wasm`);
  return new URL(".", url).pathname;
}
