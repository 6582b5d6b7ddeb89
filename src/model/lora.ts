/**
 * LoRA (PEFT's convention): a targeted projection y = x · Wᵀ becomes y = x · Wᵀ + s · (x · Aᵀ) · Bᵀ with A [r, in],
 * B [out, r] and s = alpha / r (alpha / √r with rsLoRA). A starts uniform in ±1/√in, B at zero, so a fresh adapter
 * changes nothing. The adapter's table names each A and B after its base weight, as PEFT's state dict does
 * (`model.layers.0.self_attn.q_proj.lora_A.weight`); the base weights stay frozen, held in f16 where the GPU
 * allows, while A, B, their gradients and their optimizer moments are f32.
 */
import type { Gpu } from "../gpu/device.ts";
import type { DType } from "../gpu/tensor.ts";
import type { ModelConfig } from "./config.ts";
import { initParams } from "./init.ts";
import type { LinearGrad, LoraPair } from "./linear.ts";
import { layerNames, type ParamSpec, paramTable } from "./params.ts";
import { TensorSet } from "./weights.ts";

/** The projections LoRA can target, by PEFT's module names, with their layerNames key. */
export const LORA_MODULES = {
  q_proj: "q",
  k_proj: "k",
  v_proj: "v",
  o_proj: "o",
  gate_proj: "gate",
  up_proj: "up",
  down_proj: "down",
} as const;

/** A targetable projection's module name. */
export type LoraModule = keyof typeof LORA_MODULES;

/** PEFT's shorthand for every linear layer but the output head. */
export const ALL_LINEAR = "all-linear";

/** An adapter's shape: PEFT's r, lora_alpha, target_modules (resolved) and use_rslora. */
export interface LoraSettings {
  /** r: the rank of A [r, in] and B [out, r]. */
  rank: number;
  /** lora_alpha: the adapter's term is scaled by alpha / r (alpha / √r with rslora). */
  alpha: number;
  /** The projections adapted (q_proj, k_proj, ..., down_proj). */
  targets: LoraModule[];
  /** PEFT's use_rslora: scale by alpha / √r. */
  rslora?: boolean;
}

/** The names of a LoRA run's config keys, for messages (PEFT's own names when reading adapter_config.json). */
export interface LoraKeys {
  /** The key that sets the rank (model.lora_rank, or PEFT's r). */
  rank: string;
  /** The key that sets the targets (model.target_modules, or PEFT's target_modules). */
  targets: string;
}

const CONFIG_KEYS: LoraKeys = { rank: "model.lora_rank", targets: "model.target_modules" };

/** The scale s of the LoRA term. */
export function loraScale(s: LoraSettings): number {
  return s.rslora ? s.alpha / Math.sqrt(s.rank) : s.alpha / s.rank;
}

/** The names of a base weight's A and B (`...q_proj.weight` -> `...q_proj.lora_A.weight`, `...lora_B.weight`). */
export function loraNames(weight: string): { a: string; b: string } {
  const stem = weight.replace(/\.weight$/, "");
  return { a: `${stem}.lora_A.weight`, b: `${stem}.lora_B.weight` };
}

/** The base weight of module m in layer l. */
function targetName(l: number, m: LoraModule): string {
  return layerNames(l)[LORA_MODULES[m]];
}

/** Base weight shapes [out, in] by name. */
function shapesOf(c: ModelConfig): Map<string, number[]> {
  return new Map(paramTable(c).map((p) => [p.name, p.shape]));
}

/**
 * The targets of PEFT's target_modules: "all-linear", or module names matched as PEFT matches them (a module's full
 * name equals the entry or ends with "." and the entry: `q_proj`, `self_attn.q_proj`). An entry that matches no
 * projection, or matches one only in some layers, is refused by name.
 */
export function resolveTargets(
  c: ModelConfig,
  entries: string | readonly string[],
  keys: LoraKeys = CONFIG_KEYS,
): LoraModule[] {
  const list = typeof entries === "string" ? [entries] : entries;
  const all = Object.keys(LORA_MODULES) as LoraModule[];
  if (list.length === 1 && list[0].toLowerCase() === ALL_LINEAR) return all;
  if (list.length === 0) throw new RangeError(`${keys.targets} is empty; name projections (${all.join(", ")})`);
  const found = new Set<LoraModule>();
  for (const entry of list) {
    const hits = new Map<LoraModule, number>();
    for (let l = 0; l < c.numLayers; l++) {
      for (const m of all) {
        const full = targetName(l, m).replace(/\.weight$/, "");
        if (full === entry || full.endsWith(`.${entry}`)) hits.set(m, (hits.get(m) ?? 0) + 1);
      }
    }
    if (hits.size === 0) {
      throw new RangeError(
        `${keys.targets} entry "${entry}" matches no layer of this ${c.architecture} model; LoRA targets the ` +
          `decoder's projections: ${all.join(", ")} (or "${ALL_LINEAR}")`,
      );
    }
    for (const [m, n] of hits) {
      if (n !== c.numLayers) {
        throw new RangeError(
          `${keys.targets} entry "${entry}" matches ${m} in ${n} of ${c.numLayers} layers; Crucible's LoRA adapts ` +
            "a projection in every layer",
        );
      }
      found.add(m);
    }
  }
  return all.filter((m) => found.has(m));
}

/**
 * Refuses a rank that is not a positive integer or exceeds a targeted layer's width (the smaller side of its
 * weight), naming the key and the limit.
 */
export function checkLora(c: ModelConfig, s: LoraSettings, keys: LoraKeys = CONFIG_KEYS): void {
  if (!Number.isInteger(s.rank) || s.rank < 1) {
    throw new RangeError(`${keys.rank} ${s.rank} must be a positive integer for LoRA`);
  }
  if (!(s.alpha > 0) || !Number.isFinite(s.alpha)) throw new RangeError(`LoRA alpha ${s.alpha} must be positive`);
  if (s.targets.length === 0) throw new RangeError(`${keys.targets} names no projection`);
  let limit = Infinity, narrowest = "";
  const shapes = shapesOf(c);
  for (const m of s.targets) {
    const [out, inp] = shapes.get(targetName(0, m))!;
    if (Math.min(out, inp) < limit) [limit, narrowest] = [Math.min(out, inp), `${m} [${out}, ${inp}]`];
  }
  if (s.rank > limit) {
    throw new RangeError(
      `${keys.rank} ${s.rank} is larger than the width of ${narrowest}: with these ${keys.targets} it must be at ` +
        `most ${limit}`,
    );
  }
}

/** The adapter's parameter table: per layer and target, A [r, in] (PEFT's uniform) and B [out, r] (zeros). */
export function loraTable(c: ModelConfig, s: LoraSettings): ParamSpec[] {
  const out: ParamSpec[] = [], shapes = shapesOf(c);
  for (let l = 0; l < c.numLayers; l++) {
    for (const m of Object.keys(LORA_MODULES) as LoraModule[]) {
      if (!s.targets.includes(m)) continue;
      const w = targetName(l, m), [outDim, inDim] = shapes.get(w)!, n = loraNames(w);
      out.push({ name: n.a, shape: [s.rank, inDim], init: "kaiming", decay: true });
      out.push({ name: n.b, shape: [outDim, s.rank], init: "zeros", decay: true });
    }
  }
  return out;
}

/** Number of adapter parameters. */
export function loraCount(c: ModelConfig, s: LoraSettings): number {
  return loraTable(c, s).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
}

/** A fresh adapter: A drawn from a generator seeded by `seed` and its name, B zero. */
export function initLora(c: ModelConfig, s: LoraSettings, seed: number): Map<string, Float32Array> {
  return initParams(c, seed, { specs: loraTable(c, s) });
}

/** f16's largest finite value. */
const F16_MAX = 65504;

/**
 * The storage of a frozen base tensor: with `f16`, matrices (embedding, projections, head) whose values fit f16's
 * range are f16 (bf16 checkpoints convert exactly in [2^-14, 65504]; smaller magnitudes lose precision as subnormals);
 * norms, biases and any matrix with a value past ±65504 stay f32.
 */
export function frozenDtype(spec: ParamSpec, data: Float32Array, dtype: "f16" | "f32"): DType {
  if (dtype === "f32" || spec.init !== "normal") return "f32";
  for (let i = 0; i < data.length; i++) if (Math.abs(data[i]) > F16_MAX) return "f32";
  return "f16";
}

/** An adapter on the GPU (f32), bound to a base model's shapes. */
export class LoraAdapters {
  /** A and B of every targeted projection of every layer, f32, by Crucible's names (loraTable). */
  readonly tensors: TensorSet;
  /** The factor on the adapter's term: alpha / r, or alpha / √r with rslora. */
  readonly scale: number;

  /** Uploads adapter tensors (every entry of loraTable(config, settings), checked). */
  constructor(gpu: Gpu, config: ModelConfig, readonly settings: LoraSettings, host: ReadonlyMap<string, Float32Array>) {
    checkLora(config, settings);
    this.scale = loraScale(settings);
    this.tensors = TensorSet.fromHost(gpu, config, host, { specs: loraTable(config, settings) });
  }

  /**
   * The adapter of a base weight, or undefined when it is not targeted.
   *
   * @ignore
   */
  pair(weight: string): LoraPair | undefined {
    const n = loraNames(weight), a = this.tensors.find(n.a);
    return a ? { a, b: this.tensors.get(n.b), scale: this.scale } : undefined;
  }

  /**
   * The adapter of a base weight with the gradients of A and B that `grads` holds.
   *
   * @ignore
   */
  grad(weight: string, grads: TensorSet): LinearGrad["lora"] {
    const pair = this.pair(weight);
    if (!pair) return undefined;
    const n = loraNames(weight);
    return { ...pair, dA: grads.find(n.a), dB: grads.find(n.b) };
  }

  /** Frees the adapter's tensors. */
  release(): void {
    this.tensors.release();
  }
}
