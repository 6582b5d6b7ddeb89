/**
 * The measurements of `deno task bench model`: the models (the built-in tiny one and a random one of Qwen2.5-0.5B's
 * vocabulary and layer shapes), one SFT-style training step (packed batch, mean NLL through nllGrad, AdamW),
 * KV-cached batched decoding through the Generator, peak pool bytes per parameter, and GPU time per kernel of one
 * training step.
 * With a LoRA rank, the base is frozen in f16 with adapters on every projection, and the step trains the adapters.
 */
import { Batch } from "../src/gpu/batch.ts";
import type { Gpu } from "../src/gpu/device.ts";
import { poolOf } from "../src/gpu/pool.ts";
import { partRows } from "../src/gpu/split.ts";
import { type DType, DTYPE_BYTES } from "../src/gpu/tensor.ts";
import { GpuTimer, type Timing } from "../src/gpu/timing.ts";
import { type ModelConfig, parseModelConfig } from "../src/model/config.ts";
import { Generator } from "../src/model/generate.ts";
import { PackedInputs, packSequences } from "../src/model/packing.ts";
import { frozenDtype, initLora, LoraAdapters, type LoraSettings, resolveTargets } from "../src/model/lora.ts";
import { loraTransformer } from "../src/model/lora_model.ts";
import { paramCount } from "../src/model/params.ts";
import { Transformer } from "../src/model/transformer.ts";
import { TensorSet, uploadParam } from "../src/model/weights.ts";
import { resolveConfig } from "../src/config/load.ts";
import { configSource } from "../src/config/presets.ts";
import { nllGrad } from "../src/train/nll.ts";
import { AdamW, ADAMW_DEFAULTS } from "../src/update/optimizer.ts";
import { loadModel } from "../src/train/setup.ts";
import { getTask } from "../tasks/mod.ts";
import { tokenIds } from "./inputs.ts";

/** Qwen2.5-0.5B's vocabulary and layer shapes (its config.json). */
const QWEN05B = {
  model_type: "qwen2",
  vocab_size: 151936,
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  rope_theta: 1000000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  max_position_embeddings: 32768,
  eos_token_id: 151643,
};

/** A model on the GPU and what to say about it. */
export interface BenchModel {
  name: string;
  config: ModelConfig;
  model: Transformer;
  params: number;
  /** Why the vocabulary is what it is. */
  vocabNote: string;
  /** The parameters on the host, where kept (the tiny model: the onnx engine is measured on it too). */
  tensors?: ReadonlyMap<string, Float32Array>;
}

/** LoRA settings of the bench: rank r on every projection (all-linear), alpha 2r. */
export function benchLora(config: ModelConfig, rank: number): LoraSettings | undefined {
  return rank > 0 ? { rank, alpha: 2 * rank, targets: resolveTargets(config, "all-linear") } : undefined;
}

/** The built-in tiny model exactly as `deno task train textcraft` builds it (its vocabulary, its seeded weights). */
export async function tinyModel(gpu: Gpu, loraRank = 0): Promise<BenchModel> {
  // The built-in tiny model whatever the main job starts from, so the benchmark keeps measuring one shape.
  const c = resolveConfig(await configSource("textcraft"), ["model.path=null", "model.tiny=null"]);
  const base = getTask(c.task);
  const host = await loadModel(c, c.data.prompt ? { ...base, prompt: c.data.prompt } : base);
  const settings = benchLora(host.config, loraRank);
  return {
    name: "tiny",
    config: host.config,
    model: settings
      ? loraTransformer(gpu, host.config, host.tensors, {
        settings,
        adapter: initLora(host.config, settings, 1),
        baseDtype: "auto",
      })
      : Transformer.fromHost(gpu, host.config, host.tensors),
    params: paramCount(host.config),
    vocabNote: "the word-level TextCraft vocabulary of configs/models/tiny.yaml's model",
    tensors: host.tensors,
  };
}

/**
 * What the 0.5B-shaped model's vocabulary note says: Qwen's own 151936, and how many row parts its embedding takes
 * where it passes this adapter's tensor limit (lavapipe binds at most 128 MiB: 5 parts of up to 37440 rows in f32).
 */
export function qwenVocabNote(gpu: Gpu, dtype: DType = "f32"): string {
  const C = QWEN05B.hidden_size, V = QWEN05B.vocab_size;
  const parts = partRows(gpu, [V, C], dtype);
  if (parts.length === 1) return "Qwen2.5-0.5B's own";
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  return `Qwen2.5-0.5B's own; its ${dtype} embedding (${mib(V * C * DTYPE_BYTES[dtype])}) passes this adapter's ` +
    `${mib(gpu.tensorLimit)} tensor limit, so it is held in ${parts.length} row parts of up to ${parts[0]} rows`;
}

/**
 * A random model with Qwen2.5-0.5B's vocabulary and layer shapes (24 layers, C 896, I 4864, H 14, KV 2, D 64, tied
 * head); with a LoRA rank, its matrices frozen in f16. Matrices past the adapter's tensor limit are split by rows.
 */
export function qwenShapedModel(gpu: Gpu, seed = 1, loraRank = 0): BenchModel {
  const config = parseModelConfig(QWEN05B, "Qwen2.5-0.5B-shaped model");
  let k = 0;
  // Uniform values with the init's std 0.02 stand in for its normals: one tensor on the host at a time, and
  // the values change no timing.
  const settings = benchLora(config, loraRank);
  const f16 = settings !== undefined && gpu.features.f16;
  const weights = new TensorSet(gpu, config, (spec) => {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (spec.init === "ones") data.fill(1);
    else if (spec.init === "normal") uniformFill(data, 0.02, seed * 7919 + ++k);
    return uploadParam(gpu, spec, data, f16 ? frozenDtype(spec, data, "f16") : "f32");
  });
  const lora = settings ? new LoraAdapters(gpu, config, settings, initLora(config, settings, seed)) : undefined;
  return {
    name: "0.5b",
    config,
    model: new Transformer(gpu, config, weights, { lora }),
    params: paramCount(config),
    vocabNote: qwenVocabNote(gpu, f16 ? "f16" : "f32"),
  };
}

/** Fills with uniform values of standard deviation `std` (xorshift32: cheap for hundreds of millions). */
function uniformFill(data: Float32Array, std: number, seed: number): void {
  let x = (seed >>> 0) || 1;
  const scale = (std * Math.sqrt(3)) / 2147483648;
  for (let i = 0; i < data.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = ((x >>> 0) - 2147483648) * scale;
  }
}

/** Shape of the training batch. */
export interface TrainShape {
  /** Tokens of the packed batch. */
  tokens: number;
  /** Tokens per sequence (the last one may be shorter). */
  seqLen: number;
}

/** What the training measurement found. Times in ms. */
export interface TrainResult {
  tokens: number;
  seqs: number;
  seqLen: number;
  /** Wall time of each timed step: recording, GPU work and the step's one readback. */
  stepMs: number[];
  bestMs: number;
  tokensPerS: number;
  /** Mean NLL of the last step (about ln V for a fresh random model). */
  loss: number;
  /** Most pool bytes live during the timed steps: parameters, gradients, AdamW moments, activations, scratch. */
  peakBytes: number;
  bytesPerParam: number;
  /** Pool bytes live between steps (parameters, gradients, AdamW moments, inputs), bucket rounding included. */
  heldBytes: number;
}

/**
 * One SFT-style step, over and over: a packed batch of random ids, the mean NLL of every next token through
 * nllGrad, the backward into every parameter and an AdamW update, recorded into one batch with one readback.
 */
export class TrainBench {
  readonly inputs: PackedInputs;
  readonly #nll;
  readonly #grads: TensorSet;
  readonly #opt: AdamW;
  readonly seqs: number;

  constructor(readonly gpu: Gpu, readonly m: BenchModel, readonly shape: TrainShape) {
    const lengths: number[] = [];
    for (let left = shape.tokens; left > 0; left -= shape.seqLen) lengths.push(Math.min(shape.seqLen, left));
    this.seqs = lengths.length;
    const V = m.config.vocabSize;
    const packed = packSequences(lengths.map((n, s) => ({ ids: tokenIds(n, V, 1000 + s) })));
    this.inputs = new PackedInputs(gpu, packed);
    this.#nll = nllGrad(gpu, new Float32Array(shape.tokens).fill(1 / shape.tokens));
    // With LoRA, gradients and moments exist for the adapters alone.
    const trained = m.model.lora?.tensors ?? m.model.weights;
    this.#grads = TensorSet.zeros(gpu, m.config, trained.specs);
    this.#opt = new AdamW(gpu, trained, this.#grads, ADAMW_DEFAULTS);
  }

  /** SYNC POINT: one step, timed from the start of recording to the readback of its loss and gradient norm. */
  async step(timer?: GpuTimer): Promise<{ ms: number; loss: number; dispatches: number }> {
    const t0 = performance.now();
    const batch = new Batch(this.gpu, timer);
    this.#grads.clear(batch);
    const out = this.m.model.forward(batch, this.inputs, { grads: this.#grads, lossGrad: this.#nll.grad });
    this.#opt.record(batch, 1e-5);
    const dispatches = batch.dispatches;
    const [stats, logp] = await batch.read([this.#opt.stats, out.logp]);
    const ms = performance.now() - t0;
    this.#opt.commit(stats);
    out.logp.release();
    out.entropy.release();
    let sum = 0;
    for (const x of logp) sum += x;
    return { ms, loss: -sum / logp.length, dispatches };
  }

  /** A first step (pipelines, first compiles), then `steps` timed ones with the pool's peak reset before them. */
  async measure(steps: number): Promise<TrainResult> {
    await this.step();
    const pool = poolOf(this.gpu.device);
    pool.resetPeak();
    const heldBytes = pool.stats.live;
    const stepMs: number[] = [];
    let loss = NaN;
    for (let i = 0; i < steps; i++) {
      const r = await this.step();
      stepMs.push(r.ms);
      loss = r.loss;
    }
    const bestMs = Math.min(...stepMs);
    const peakBytes = pool.stats.peak;
    return {
      tokens: this.shape.tokens,
      seqs: this.seqs,
      seqLen: this.shape.seqLen,
      stepMs,
      bestMs,
      tokensPerS: this.shape.tokens / (bestMs / 1000),
      loss,
      peakBytes,
      bytesPerParam: peakBytes / this.m.params,
      heldBytes,
    };
  }

  /** SYNC POINT: one step with a timestamp around every dispatch (up to 2048), grouped by kernel. */
  async profile(): Promise<Profile> {
    const timer = new GpuTimer(this.gpu, 2048);
    try {
      if (!timer.available) return { timings: [], dispatches: 0, gpuMs: 0, groups: [] };
      const { dispatches } = await this.step(timer);
      const timings = await timer.read();
      return { timings, dispatches, ...groupTimings(timings) };
    } finally {
      timer.destroy();
    }
  }

  release(): void {
    this.#opt.release();
    this.#grads.release();
    this.#nll.release();
    this.inputs.release();
  }
}

/** GPU time of one training step by kernel. */
export interface Profile {
  timings: Timing[];
  /** Dispatches recorded (those past the timer's capacity are not timed). */
  dispatches: number;
  gpuMs: number;
  groups: KernelShare[];
}

/** One kernel's share of a step. */
export interface KernelShare {
  kernel: string;
  ms: number;
  share: number;
  calls: number;
}

/** A dispatch's label without its template values: `embedding_forward{"ET":"f32"}` -> `embedding_forward`. */
export function kernelGroup(label: string): string {
  const base = label.split("{")[0].trim();
  return base === "matmul_backward" ? "matmul_backward (bias gradient)" : base;
}

/** Sums timings by kernel group, largest first. */
export function groupTimings(timings: readonly Timing[]): { gpuMs: number; groups: KernelShare[] } {
  const by = new Map<string, { ms: number; calls: number }>();
  let gpuMs = 0;
  for (const t of timings) {
    const key = kernelGroup(t.label);
    const g = by.get(key) ?? { ms: 0, calls: 0 };
    g.ms += t.ms;
    g.calls++;
    by.set(key, g);
    gpuMs += t.ms;
  }
  const groups = [...by].map(([kernel, g]) => ({ kernel, ...g, share: gpuMs > 0 ? g.ms / gpuMs : 0 }));
  return { gpuMs, groups: groups.sort((a, b) => b.ms - a.ms) };
}

/** Shape of the decode measurement. */
export interface DecodeShape {
  seqs: number;
  promptLen: number;
  /** Decode steps per submit; a block samples steps + 1 tokens per sequence. */
  steps: number;
  /** Timed blocks (best of). */
  blocks: number;
}

/** What the decode measurement found. */
export interface DecodeResult extends DecodeShape {
  /** Tokens sampled per block, all sequences together. */
  blockTokens: number;
  /** Prefill of every prompt plus the first block, first compiles included. */
  firstMs: number;
  blockMs: number[];
  bestMs: number;
  tokensPerS: number;
}

/**
 * SYNC POINTS (one per block): prompts of random ids in `seqs` cache slots; a first decode call prefills them and
 * samples one block (not counted), then each timed call samples one block of steps + 1 tokens per sequence at
 * temperature 1 (no stop ids), one submit and one readback each.
 */
export async function measureDecode(m: BenchModel, s: DecodeShape): Promise<DecodeResult> {
  const perBlock = s.steps + 1;
  const maxLen = s.promptLen + perBlock * (s.blocks + 1) + 1;
  // The KV cache as rollouts have it by default (f16 where the adapter has shader-f16).
  const gen = new Generator(m.model, { slots: s.seqs, maxLen, blockSteps: s.steps, cache: "auto" });
  try {
    const V = m.config.vocabSize;
    const seqs = Array.from({ length: s.seqs }, (_, n) => gen.open([...tokenIds(s.promptLen, V, 2000 + n)], n));
    const limits = seqs.map(() => ({ maxNewTokens: perBlock, stopIds: [] }));
    let t0 = performance.now();
    await gen.decode(seqs, limits);
    const firstMs = performance.now() - t0;
    const blockMs: number[] = [];
    for (let b = 0; b < s.blocks; b++) {
      t0 = performance.now();
      const out = await gen.decode(seqs, limits);
      blockMs.push(performance.now() - t0);
      if (out.some((g) => g.ids.length !== perBlock)) throw new Error("A decode block sampled fewer tokens than asked");
    }
    const bestMs = Math.min(...blockMs);
    const blockTokens = s.seqs * perBlock;
    return { ...s, blockTokens, firstMs, blockMs, bestMs, tokensPerS: blockTokens / (bestMs / 1000) };
  } finally {
    gen.release();
  }
}
