/**
 * Token sampler for KV-cached generation: temperature, top-k and top-p in Hugging Face's order, drawn by inverse
 * CDF from uniform numbers the host passes in, plus each sampled token's log-probability under softmax(logits / T)
 * over the full vocabulary (the "old log-probability" RL needs). One workgroup per row (16, 64 or 256 invocations);
 * no sort, no readback.
 *
 * Randomness enters as data: draw the uniforms with {@linkcode drawUniforms} from the run's seeded `Rng`, so a
 * sample replays exactly and the float64 reference (tests/reference/sample.ts) sees the same numbers.
 */
import source from "../../shaders/sample.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import type { Gpu } from "../gpu/device.ts";
import type { Rng } from "../util/random.ts";
import { placeholder, type Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";
import { logprobTemperature } from "../util/temperature.ts";
import { LOOP_BUDGET } from "./wgsl.ts";

const SHADER: Shader = { name: "sample", source };

const PARAMS = uniforms(
  [
    ["N", "u32"],
    ["V", "u32"],
    ["invTemp", "f32"],
    ["greedy", "u32"],
    ["topK", "u32"],
    ["topP", "f32"],
    ["hasActive", "u32"],
  ] as const,
);

/** Largest vocabulary: the kernel counts tokens in f32, exact below 2^24. */
export const MAX_SAMPLE_VOCAB = 1 << 24;

/** How to turn logits into a token. The defaults sample from the plain softmax. */
export interface SampleSettings {
  /** Divides the logits; 0 means greedy (argmax, first index on ties). Default 1. */
  temperature?: number;
  /** Keeps every token whose probability is >= the k-th largest (ties kept); 0 or >= V = off. Default 0. */
  topK?: number;
  /** Keeps the smallest most-probable set whose mass reaches topP after top-k (ties kept); >= 1 = off. Default 1. */
  topP?: number;
}

/** Arguments of {@linkcode sample}. N rows (one per sequence being decoded), V tokens. */
export interface SampleArgs extends SampleSettings {
  /** [N, V] f32 (any leading shape whose product is N). */
  logits: Tensor;
  /** [N] f32 in [0, 1), from {@linkcode drawUniforms}; unused when greedy. */
  uniform: Tensor;
  /** [N] u32 output; may be a view of the next decode step's token input, so no readback is needed. */
  ids: Tensor;
  /** [N] f32 output: log p(id) under softmax(logits / temperature) over all V tokens (temperature 1 if greedy). */
  logprob: Tensor;
  /** [N] u32: rows with 0 are skipped and their `ids` and `logprob` keep their values (finished sequences). */
  active?: Tensor;
  /** Invocations per row: 16, 64 or 256; defaults to the adapter's pick ({@linkcode pickSampleWorkgroup}). */
  workgroup?: number;
}

/** The workgroup sizes the sampler compiles for: squares of its scan's group size. */
export const SAMPLE_WORKGROUPS = [16, 64, 256] as const;

/**
 * Worst-case loop iterations of one invocation over a row of V logits at a workgroup size: about 32 passes over its
 * ceil(V / WG) logits (argmax, the sum, two 14-step threshold searches, the top-k mass, the draw's levels) and the
 * scans' short loops. llvmpipe ends an invocation's loops silently past {@linkcode LOOP_BUDGET} iterations.
 */
export function sampleLoopSteps(V: number, workgroup: number): number {
  return 32 * Math.ceil(V / workgroup) + 200;
}

/**
 * Invocations per row for this adapter and vocabulary: on CPU rasterisers the smallest size whose loops stay within
 * llvmpipe's budget (every barrier of the reductions and scans switches between all of a workgroup's invocations
 * there, and a row's work is the same whatever the size); 256 on real GPUs. Measured with `deno task bench kernels
 * --filter sample`: docs/kernel-timings.md.
 */
export function pickSampleWorkgroup(gpu: Gpu, V: number): number {
  if (!gpu.software) return 256;
  return SAMPLE_WORKGROUPS.find((wg) => sampleLoopSteps(V, wg) <= LOOP_BUDGET) ?? 256;
}

/**
 * The uniform numbers for one sampling step: `n` floats in [0, 1) from the host's generator (24 random bits each,
 * exact in f32). Callers and tests draw them the same way, so a GPU sample can be replayed on the CPU.
 *
 * @example
 * ```ts
 * const rng = new Rng(1234);
 * const u = fromHost(gpu, drawUniforms(rng, 8), [8]);
 * ```
 */
export function drawUniforms(rng: Rng, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = rng.float();
  return out;
}

/** Checks settings and returns the kernel's view of them: 1/T, greedy flag, top-k (0 = off), top-p. */
function resolveSampleSettings(
  s: SampleSettings,
  V: number,
): { invTemp: number; greedy: number; topK: number; topP: number } {
  const temperature = s.temperature ?? 1;
  const topK = s.topK ?? 0;
  const topP = s.topP ?? 1;
  if (!(temperature >= 0) || !Number.isFinite(temperature)) {
    throw new RangeError(`Sampling temperature must be finite and >= 0 (0 = greedy), got ${temperature}`);
  }
  if (!Number.isInteger(topK) || topK < 0) {
    throw new RangeError(`Sampling topK must be an integer >= 0 (0 = off), got ${topK}`);
  }
  if (!(topP > 0)) throw new RangeError(`Sampling topP must be > 0 (>= 1 = off), got ${topP}`);
  const invTemp = 1 / logprobTemperature(temperature);
  if (!Number.isFinite(Math.fround(invTemp))) {
    throw new RangeError(`Sampling temperature ${temperature} is too small: 1/temperature overflows f32`);
  }
  return {
    invTemp,
    greedy: temperature === 0 ? 1 : 0,
    topK: topK >= V ? 0 : topK,
    topP: topP >= 1 ? 1 : topP,
  };
}

function expect(t: Tensor, what: string, size: number, dtype: Tensor["dtype"]): void {
  if (t.size !== size || t.dtype !== dtype) {
    throw new TypeError(`Sampling ${what} must be [${size}] ${dtype}, got [${t.shape}] ${t.dtype}`);
  }
}

/**
 * Records one sampling step: for each active row of `logits`, writes the drawn token to `ids` and its
 * log-probability to `logprob`. One dispatch, one workgroup per row.
 *
 * @example
 * ```ts
 * const rng = new Rng(7);
 * const u = fromHost(gpu, drawUniforms(rng, N), [N]);
 * const batch = new Batch(gpu);
 * sample(batch, { logits, uniform: u, ids: nextTokens, logprob, temperature: 0.7, topK: 50, topP: 0.9 });
 * await batch.submit();
 * ```
 */
export function sample(batch: Batch, args: SampleArgs): void {
  const { logits, uniform, ids, logprob, active } = args;
  if (logits.dtype !== "f32" || logits.shape.length < 1) {
    throw new TypeError(`Sampling logits must be [N, V] f32, got [${logits.shape}] ${logits.dtype}`);
  }
  const V = logits.shape[logits.shape.length - 1];
  if (V < 1 || V >= MAX_SAMPLE_VOCAB) {
    throw new RangeError(`Sampling needs a vocabulary of 1 to ${MAX_SAMPLE_VOCAB - 1} tokens, got ${V}`);
  }
  const N = logits.size / V;
  expect(uniform, "uniform", N, "f32");
  expect(ids, "ids", N, "u32");
  expect(logprob, "logprob", N, "f32");
  if (active) expect(active, "active mask", N, "u32");
  const settings = resolveSampleSettings(args, V);
  const wg = args.workgroup ?? pickSampleWorkgroup(batch.gpu, V);
  if (!(SAMPLE_WORKGROUPS as readonly number[]).includes(wg)) {
    throw new RangeError(`Sampler workgroup must be one of ${SAMPLE_WORKGROUPS.join(", ")}, got ${wg}`);
  }
  if (batch.gpu.software && sampleLoopSteps(V, wg) > LOOP_BUDGET) {
    throw new RangeError(
      `Sampler workgroup ${wg} may run ${sampleLoopSteps(V, wg)} loop iterations per invocation for V ${V}, past ` +
        `the ${LOOP_BUDGET} that CPU rasterisers allow; use a larger workgroup`,
    );
  }
  batch.dispatch({
    kernel: kernel(batch.gpu, SHADER, { params: PARAMS, template: { WG: wg, GROUP: Math.sqrt(wg) } }),
    buffers: [logits, uniform, active ?? placeholder(batch.gpu), ids, logprob],
    params: { N, V, ...settings, hasActive: active ? 1 : 0 },
    grid: foldGrid(batch.gpu, N),
  });
}
