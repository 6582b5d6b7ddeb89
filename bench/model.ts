/**
 * `deno task bench model [--json] [--size tiny|0.5b|all] [...]`: whole-model speed and memory on the current adapter.
 * Per model: tokens/s of one training step (forward + backward + AdamW on a packed batch, SFT-style loss), tokens/s
 * of KV-cached batched decoding, peak GPU bytes per parameter while training, and each kernel's share of one
 * training step's GPU time (the hot spots); for the tiny model, also the onnx engine's decode tokens/s
 * (onnxruntime-web, wasm) beside Crucible's on the same single sequence. Every number printed is measured.
 * `--lora-rank r` measures LoRA instead: the base frozen in f16, rank-r adapters on every projection trained.
 */
import { getGpu, type Gpu } from "../src/gpu/device.ts";
import { poolOf } from "../src/gpu/pool.ts";
import { loraCount } from "../src/model/lora.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { measureOnnxDecode, type OnnxDecodeResult } from "./onnx.ts";
import {
  type BenchModel,
  type DecodeResult,
  type DecodeShape,
  measureDecode,
  type Profile,
  qwenShapedModel,
  tinyModel,
  TrainBench,
  type TrainResult,
  type TrainShape,
} from "./model_run.ts";

/** Usage text of the `model` subcommand. */
export const MODEL_USAGE = "Usage: deno task bench model [--json] [--size tiny|0.5b|all] [--tokens N] [--seq-len N] " +
  "[--steps N] [--decode-seqs N] [--prompt-len N] [--decode-steps N] [--decode-blocks N] [--lora-rank N] " +
  "[--no-profile] [--no-onnx]\n" +
  "  --size           which model: the built-in tiny one, a random Qwen2.5-0.5B-shaped one, or both (default all)\n" +
  "  --tokens         tokens of the packed training batch (default: tiny 4096; 0.5b 64 on a CPU rasteriser, else 4096)\n" +
  "  --seq-len        tokens per packed sequence (default: 512, or --tokens when smaller)\n" +
  "  --steps          timed training steps after a first one, best of (default: 3; 0.5b on a CPU rasteriser 1)\n" +
  "  --decode-seqs    sequences decoded together (default 32)\n" +
  "  --prompt-len     prompt tokens per sequence (default: 64; 0.5b on a CPU rasteriser 4)\n" +
  "  --decode-steps   decode steps per submit: a block samples this + 1 tokens per sequence (default: 8; 0.5b\n" +
  "                   on a CPU rasteriser 4)\n" +
  "  --decode-blocks  timed blocks after a first one (prefill), best of (default: 3; 0.5b on a CPU rasteriser 1)\n" +
  "  --lora-rank      LoRA: freeze the base (f16 matrices) and train rank-N adapters on every projection, alpha 2N\n" +
  "                   (default 0: every parameter trains, f32)\n" +
  "  --no-profile     skip the per-kernel timing of one training step\n" +
  "  --no-onnx        skip onnxruntime-web's decode (tiny model; its package is fetched on first use)\n" +
  "  --json           one JSON object per model and line";

const SIZES = ["tiny", "0.5b"] as const;
/** A model `bench model` measures. */
export type Size = typeof SIZES[number];

/** Settings of one model's run. */
interface Plan {
  train: TrainShape;
  steps: number;
  decode: DecodeShape;
  profile: boolean;
  onnx: boolean;
  loraRank: number;
}

/** What one model's run reports (the JSON object). */
export interface ModelReport {
  model: string;
  adapter: string;
  layers: number;
  hidden: number;
  vocab: number;
  intermediate: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocabNote: string;
  params: number;
  train: Omit<TrainResult, "peakBytes" | "bytesPerParam" | "heldBytes">;
  decode: DecodeResult;
  /** With --lora-rank: the adapter's rank and trained parameters. */
  lora?: { rank: number; params: number };
  /**
   * Peak pool bytes while training; held = live between steps; state = parameters, gradients and moments as
   * stored (16 for full f32 training; with LoRA the f16 base plus 16 per adapter parameter), per base parameter.
   */
  memory: {
    peakBytes: number;
    bytesPerParam: number;
    heldBytesPerParam: number;
    stateBytesPerParam: number;
  };
  profile?: { gpuMs: number; dispatches: number; timed: number; hotspots: Profile["groups"] };
  /** The onnx engine's decode beside Crucible's on one sequence (tiny model only). */
  onnx?: OnnxDecodeResult;
}

function plan(gpu: Gpu, size: Size, v: Record<string, string | boolean | undefined>): Plan {
  const slow = size === "0.5b" && gpu.software;
  const int = (flag: string, fallback: number, lo = 1) =>
    numberFlag(`--${flag}`, v[flag] as string | undefined, fallback, { lo, hi: 1 << 20, integer: true });
  const tokens = int("tokens", slow ? 64 : 4096);
  return {
    train: { tokens, seqLen: int("seq-len", Math.min(512, tokens)) },
    steps: int("steps", slow ? 1 : 3),
    decode: {
      seqs: int("decode-seqs", 32),
      promptLen: int("prompt-len", slow ? 4 : 64),
      steps: int("decode-steps", slow ? 4 : 8, 0),
      blocks: int("decode-blocks", slow ? 1 : 3),
    },
    profile: v["no-profile"] !== true,
    onnx: v["no-onnx"] !== true,
    loraRank: int("lora-rank", 0, 0),
  };
}

/** The flags of the `model` subcommand (parseArgs options). */
const OPTIONS = {
  json: { type: "boolean", default: false },
  size: { type: "string", default: "all" },
  tokens: { type: "string" },
  "seq-len": { type: "string" },
  steps: { type: "string" },
  "decode-seqs": { type: "string" },
  "prompt-len": { type: "string" },
  "decode-steps": { type: "string" },
  "decode-blocks": { type: "string" },
  "no-profile": { type: "boolean", default: false },
  "no-onnx": { type: "boolean", default: false },
  "lora-rank": { type: "string" },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** Runs the `model` subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench model", { args, options: OPTIONS });
  if (values.help) return console.log(MODEL_USAGE);
  const sizes: readonly Size[] = values.size === "all" ? SIZES : SIZES.filter((s) => s === values.size);
  if (sizes.length === 0) throw new RangeError(`--size must be tiny, 0.5b or all, got "${values.size}"`);
  if (dryRun(`would measure the model sizes ${sizes.join(", ")}`)) return;
  const gpu = await getGpu();
  const plans = sizes.map((s) => [s, plan(gpu, s, values)] as const); // flags checked before any work
  for (const [size, p] of plans) {
    const report = await measureOne(gpu, size, p, values.json ? undefined : console.log);
    if (values.json) console.log(JSON.stringify(report));
  }
}

/**
 * One model's report, as `deno task bench model --size <size> <flags>` measures it (quietly): for `bench
 * roofline` and `bench gpu`, which set it against the adapter's ceilings.
 */
export function measureModelSize(gpu: Gpu, size: Size, flags: readonly string[]): Promise<ModelReport> {
  const { values } = parseFlags("deno task bench model", { args: [...flags], options: OPTIONS });
  return measureOne(gpu, size, plan(gpu, size, values));
}

async function measureOne(gpu: Gpu, size: Size, p: Plan, say?: (line: string) => void): Promise<ModelReport> {
  const m = size === "tiny" ? await tinyModel(gpu, p.loraRank) : qwenShapedModel(gpu, 1, p.loraRank);
  try {
    return await runModel(gpu, m, p, say);
  } finally {
    m.model.weights.release();
    m.model.lora?.release();
    poolOf(gpu.device).trim(); // the next model starts from an empty pool
  }
}

/** Measures one model; `say` gets each text line as soon as it is known (undefined: quiet). */
async function runModel(gpu: Gpu, m: BenchModel, p: Plan, say?: (line: string) => void): Promise<ModelReport> {
  const c = m.config, lora = m.model.lora;
  const adapter = lora ? { rank: lora.settings.rank, params: loraCount(c, lora.settings) } : undefined;
  // Parameters, gradients and AdamW moments as stored: f32 throughout, or the frozen base plus f32 adapter state.
  let state = 16;
  if (adapter) {
    state = [...m.model.weights.tensors.values()].reduce((a, t) => a + t.bytes, 16 * adapter.params) / m.params;
  }
  say?.(
    `${m.name}: ${c.architecture} L${c.numLayers} C${c.hiddenSize} I${c.intermediateSize} H${c.numHeads} ` +
      `KV${c.numKvHeads} D${c.headDim} V${c.vocabSize}${c.tieWordEmbeddings ? " (tied head)" : ""}, ` +
      `${(m.params / 1e6).toFixed(2)} M parameters, ` +
      (adapter
        ? `frozen (f16 matrices) with LoRA rank ${adapter.rank} on every projection: ` +
          `${(adapter.params / 1e6).toFixed(3)} M trained parameters (f32)`
        : "f32") +
      `; on ${gpu.name}`,
  );
  say?.(`  vocabulary ${c.vocabSize}: ${m.vocabNote}`);
  const bench = new TrainBench(gpu, m, p.train);
  let train: TrainResult, profile: Profile | undefined;
  try {
    train = await bench.measure(p.steps);
    say?.(trainLine(train));
    say?.(memoryLine(train, m.params, state));
    if (p.profile) {
      profile = await bench.profile();
      profileLines(profile).forEach((l) => say?.(l));
    }
  } finally {
    bench.release();
  }
  const decode = await measureDecode(m, p.decode);
  say?.(decodeLine(decode));
  const onnx = p.onnx && m.tensors && !lora ? await measureOnnxDecode(m, p.decode.promptLen, 64) : undefined;
  if (onnx) say?.(onnxLine(onnx));
  const { peakBytes, bytesPerParam, heldBytes, ...trainRest } = train;
  return {
    model: m.name,
    adapter: gpu.name,
    layers: c.numLayers,
    hidden: c.hiddenSize,
    vocab: c.vocabSize,
    intermediate: c.intermediateSize,
    heads: c.numHeads,
    kvHeads: c.numKvHeads,
    headDim: c.headDim,
    vocabNote: m.vocabNote,
    params: m.params,
    train: trainRest,
    decode,
    ...(adapter ? { lora: adapter } : {}),
    memory: { peakBytes, bytesPerParam, heldBytesPerParam: heldBytes / m.params, stateBytesPerParam: state },
    ...(profile
      ? {
        profile: {
          gpuMs: profile.gpuMs,
          dispatches: profile.dispatches,
          timed: profile.timings.length,
          hotspots: profile.groups,
        },
      }
      : {}),
    ...(onnx ? { onnx } : {}),
  };
}

const ms = (x: number) => x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${x.toFixed(0)} ms`;
const rate = (x: number) => x >= 100 ? x.toFixed(0) : x.toPrecision(3);

function trainLine(t: TrainResult): string {
  return `  train   ${t.tokens} tokens (${t.seqs} x ${t.seqLen}) fwd+bwd+AdamW: best ${ms(t.bestMs)} of ` +
    `${t.stepMs.length} step(s) -> ${rate(t.tokensPerS)} tokens/s (loss ${t.loss.toFixed(3)})`;
}

function memoryLine(t: TrainResult, params: number, state: number): string {
  return `  memory  peak ${(t.peakBytes / 2 ** 20).toFixed(1)} MiB live in the pool while training = ` +
    `${t.bytesPerParam.toFixed(1)} bytes/parameter, of which ${(t.heldBytes / params).toFixed(1)} held between ` +
    "steps (parameters, gradients, AdamW moments and inputs in pool buckets; " +
    (state === 16
      ? "the f32 state alone is 16"
      : `the frozen base and f32 adapter state alone is ${state.toFixed(2)}`) +
    ") and the rest activations and scratch";
}

function decodeLine(d: DecodeResult): string {
  return `  decode  ${d.seqs} sequences, prompt ${d.promptLen}, blocks of ${d.steps + 1} tokens each: best ` +
    `${ms(d.bestMs)} of ${d.blockMs.length} block(s) -> ${rate(d.tokensPerS)} tokens/s ` +
    `(first block with prefill and compiles ${ms(d.firstMs)})`;
}

function onnxLine(o: OnnxDecodeResult): string {
  if ("error" in o) return `  onnx    ${o.engine}: not measured (${o.error})`;
  return `  onnx    ${o.engine}: 1 sequence, prompt ${o.promptLen}, ${o.tokens} decode steps -> ` +
    `${rate(o.tokensPerS)} tokens/s; Crucible on the same single sequence ${rate(o.crucibleOneSeqTokensPerS)} tokens/s`;
}

function profileLines(p: Profile): string[] {
  if (p.timings.length === 0) return ["  hot spots: this adapter has no timestamp queries"];
  const untimed = p.dispatches - p.timings.length;
  const lines = [
    `  hot spots of one training step (GPU timestamps, ${p.timings.length} dispatches, ${ms(p.gpuMs)} GPU time` +
    `${untimed > 0 ? `; ${untimed} more not timed` : ""}):`,
  ];
  for (const g of p.groups.slice(0, 12)) {
    lines.push(
      `    ${g.kernel.padEnd(44)} ${(100 * g.share).toFixed(1).padStart(5)}%  ${ms(g.ms).padStart(8)}  ` +
        `${String(g.calls).padStart(5)} calls`,
    );
  }
  const rest = p.groups.slice(12);
  if (rest.length > 0) {
    const share = rest.reduce((a, g) => a + g.share, 0);
    lines.push(`    ${`(${rest.length} more kernels)`.padEnd(44)} ${(100 * share).toFixed(1).padStart(5)}%`);
  }
  const opt = p.groups.filter((g) => /^(adamw|gradnorm)/.test(g.kernel)).reduce((a, g) => a + g.share, 0);
  lines.push(
    `    optimizer (gradnorm + AdamW) ${(100 * opt).toFixed(1)}%, forward + backward ${(100 * (1 - opt)).toFixed(1)}%`,
  );
  return lines;
}
