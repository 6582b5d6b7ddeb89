/**
 * `deno task bench roofline [--json] [--size tiny|0.5b|none] [--quick]`: the adapter's own ceilings, measured with
 * two microkernels (shaders/roofline.wgsl): the f32 FMA rate (independent vec4 FMA chains in registers) and the
 * memory bandwidth (a vec4 copy between two large buffers). Then a training step and decode of a model
 * (`bench model`'s measurements) as fractions of those ceilings (roofline_phases.ts): where the time goes against
 * what this card can do, not against another machine.
 */
import { foldGrid } from "../src/gpu/batch.ts";
import { getGpu, type Gpu } from "../src/gpu/device.ts";
import { kernel, type Shader } from "../src/gpu/pipeline.ts";
import { empty } from "../src/gpu/tensor.ts";
import { timeRecorded } from "../src/gpu/timing.ts";
import { uniforms } from "../src/gpu/uniforms.ts";
import { dryRun, parseFlags } from "../src/command/args.ts";
import source from "../shaders/roofline.wgsl" with { type: "text" };
import { measureModelSize, type ModelReport } from "./model.ts";
import { type Ceilings, phaseLines, rooflinePhases } from "./roofline_phases.ts";

export type { Ceilings } from "./roofline_phases.ts";

/** Usage text of the `roofline` subcommand. */
export const ROOFLINE_USAGE = "Usage: deno task bench roofline [--json] [--size tiny|0.5b|none] [--quick]\n" +
  "  --size   the model whose training step and decode are set against the ceilings (default tiny; none: the\n" +
  "           ceilings alone)\n" +
  "  --quick  small microkernels and a small model budget (a smoke test; the ceilings come out low on a GPU)\n" +
  "  --json   one JSON object: the ceilings, and the model's phases as fractions of them";

const SHADER: Shader = { name: "roofline", source };
const PARAMS = uniforms([["iterations", "u32"], ["count", "u32"], ["mul", "f32"], ["add", "f32"]] as const);
/** FLOPs of one round of main_fma per invocation: 32 vec4 FMAs. */
const FLOPS_PER_ROUND = 32 * 4 * 2;

/** Sizes of the microkernels. */
export interface CeilingPlan {
  /** main_fma workgroups of 256 (at most 65535: one grid row) and rounds per invocation. */
  fmaWorkgroups: number;
  rounds: number;
  /** Bytes of each of the copy's two buffers. */
  copyBytes: number;
}

/** The microkernels' sizes for this adapter: a GPU gets millions of invocations and a large copy. */
export function ceilingPlan(gpu: Pick<Gpu, "software" | "tensorLimit">, quick: boolean): CeilingPlan {
  const copyCap = quick ? 16 << 20 : gpu.software ? 64 << 20 : 1 << 30;
  return {
    fmaWorkgroups: quick ? 16 : gpu.software ? 64 : 8192,
    rounds: quick ? 64 : gpu.software ? 256 : 1024,
    copyBytes: Math.min(copyCap, Math.floor(gpu.tensorLimit / 16) * 16),
  };
}

/** SYNC POINTS: the adapter's f32 FMA rate and copy bandwidth (best of a few runs each, GPU time). */
export async function measureCeilings(gpu: Gpu, plan: CeilingPlan): Promise<Ceilings> {
  const n = plan.fmaWorkgroups * 256;
  const out = empty(gpu, [Math.max(n, plan.copyBytes / 16), 4], "f32", "roofline out");
  const src = empty(gpu, [plan.copyBytes / 16, 4], "f32", "roofline src");
  try {
    const fma = kernel(gpu, SHADER, { params: PARAMS, entryPoint: "main_fma" });
    const copy = kernel(gpu, SHADER, { params: PARAMS, entryPoint: "main_copy" });
    const fmaMs = await timeRecorded(gpu, (batch) =>
      batch.dispatch({
        kernel: fma,
        buffers: [out, src],
        params: { iterations: plan.rounds, count: n, mul: 0.999, add: 1e-3 },
        grid: [plan.fmaWorkgroups],
        label: "roofline fma",
      }), 5);
    const count = plan.copyBytes / 16;
    const copyMs = await timeRecorded(gpu, (batch) =>
      batch.dispatch({
        kernel: copy,
        buffers: [out, src],
        params: { iterations: 0, count, mul: 0, add: 0 },
        grid: foldGrid(gpu, Math.ceil(count / 256)),
        label: "roofline copy",
      }), 5);
    const flops = n * plan.rounds * FLOPS_PER_ROUND;
    return {
      fmaGflops: flops / fmaMs / 1e6,
      bandwidthGBs: (2 * plan.copyBytes) / copyMs / 1e6,
      fmaMs,
      copyMs,
      fmaFlops: flops,
      copyBytes: 2 * plan.copyBytes,
    };
  } finally {
    out.release();
    src.release();
  }
}

/** One line of the ceilings. */
export function ceilingLine(gpu: Gpu, c: Ceilings): string {
  return `${gpu.name}${gpu.software ? " (software)" : ""}: f32 FMA ${c.fmaGflops.toFixed(1)} GFLOP/s ` +
    `(${(c.fmaFlops / 1e9).toFixed(2)} GFLOP in ${c.fmaMs.toFixed(2)} ms), copy bandwidth ` +
    `${c.bandwidthGBs.toFixed(1)} GB/s (${(c.copyBytes / 2 ** 20).toFixed(0)} MiB moved in ${c.copyMs.toFixed(2)} ms)`;
}

/** Runs the `roofline` subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench roofline", {
    args,
    options: {
      json: { type: "boolean", default: false },
      size: { type: "string", default: "tiny" },
      quick: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return console.log(ROOFLINE_USAGE);
  const size = values.size;
  if (size !== "tiny" && size !== "0.5b" && size !== "none") {
    throw new RangeError(`--size must be tiny, 0.5b or none, got "${size}"`);
  }
  if (dryRun("would measure the adapter's ceilings")) return;
  const gpu = await getGpu();
  const ceilings = await measureCeilings(gpu, ceilingPlan(gpu, values.quick));
  if (!values.json) console.log(ceilingLine(gpu, ceilings));
  let model: ModelReport | undefined;
  if (size !== "none") {
    const budget = values.quick ? QUICK_MODEL_FLAGS : ["--no-onnx"];
    model = await measureModelSize(gpu, size, budget);
  }
  const phases = model ? rooflinePhases(ceilings, model) : undefined;
  if (values.json) console.log(JSON.stringify({ adapter: gpu.name, software: gpu.software, ceilings, phases }));
  else if (phases) phaseLines(phases).forEach((l) => console.log(l));
}

/** `bench model` flags of a smoke-sized measurement (tests, `bench gpu --quick`). */
export const QUICK_MODEL_FLAGS: readonly string[] = [
  ...["--tokens", "128", "--seq-len", "64", "--steps", "1"],
  ...["--decode-seqs", "4", "--prompt-len", "8", "--decode-steps", "2", "--decode-blocks", "1", "--no-onnx"],
];
