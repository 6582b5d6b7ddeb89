/**
 * PEFT-format LoRA adapters: a directory with `adapter_config.json` (PEFT's LoraConfig fields) and
 * `adapter_model.safetensors`, whose tensors are named as PEFT's `save_pretrained` names them for a causal LM:
 * `base_model.model.` + the base weight's stem + `.lora_A.weight` / `.lora_B.weight`, e.g.
 * `base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight` [r, in] and `....lora_B.weight` [out, r].
 * `PeftModel.from_pretrained(base, dir)` loads what saveAdapterDir writes, and loadAdapterDir reads what PEFT writes
 * (plain LoRA: no DoRA, per-module ranks, trained biases or extra saved modules, which are refused by field).
 */
import type { ModelConfig } from "./config.ts";
import {
  checkLora,
  LORA_MODULES,
  type LoraModule,
  loraNames,
  loraScale,
  type LoraSettings,
  loraTable,
  resolveTargets,
} from "./lora.ts";
import { type DirFile, exists, extraFiles, jsonBytes, readJson, writeDirAtomic } from "./model_dir.ts";
import { type HostTensor, loadSafetensors, serializeSafetensors } from "./safetensors.ts";

export const ADAPTER_CONFIG = "adapter_config.json";
export const ADAPTER_WEIGHTS = "adapter_model.safetensors";
/** The prefix of every tensor name in a PEFT adapter of a causal LM (PeftModel.base_model.model). */
export const PEFT_PREFIX = "base_model.model.";

/** PEFT's names for the settings, in its own errors. */
const PEFT_KEYS = { rank: "adapter_config.json r", targets: "adapter_config.json target_modules" };

/** adapter_config.json of a LoRA adapter of a causal LM, as PEFT writes it (its defaults where Crucible has none). */
export function peftConfig(s: LoraSettings, base: string): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: base,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layers_pattern: null,
    layers_to_transform: null,
    lora_alpha: s.alpha,
    lora_dropout: 0,
    modules_to_save: null,
    peft_type: "LORA",
    r: s.rank,
    rank_pattern: {},
    revision: null,
    target_modules: [...s.targets],
    task_type: "CAUSAL_LM",
    use_dora: false,
    use_rslora: s.rslora ?? false,
  };
}

/** What saveAdapterDir writes. */
export interface SaveAdapterOptions {
  /** The base model's configuration the adapter fits. */
  config: ModelConfig;
  /** The adapter's rank, alpha and targets (adapter_config.json). */
  settings: LoraSettings;
  /** Every tensor of loraTable(config, settings), by Crucible's name (without PEFT's prefix). */
  tensors: ReadonlyMap<string, Float32Array>;
  /** adapter_config.json's base_model_name_or_path. */
  base: string;
  /** More files by name, as saveModelDir's extra. */
  extra?: Record<string, unknown>;
  /** Told when the files are written and when an old directory was moved aside (tests). */
  onStage?: (stage: "written" | "aside") => void;
}

/**
 * Writes a PEFT adapter directory atomically (f32 tensors), replacing `dir` if it exists.
 *
 * @example
 * ```ts
 * await saveAdapterDir("runs/a/adapter", { config, settings, tensors, base: "Qwen2.5-0.5B-Instruct" });
 * ```
 */
export async function saveAdapterDir(dir: string, o: SaveAdapterOptions): Promise<void> {
  dir = dir.replace(/\/+$/, "");
  const ordered: [string, HostTensor][] = loraTable(o.config, o.settings).map((p) => {
    const data = o.tensors.get(p.name);
    if (!data || data.length !== p.shape.reduce((a, b) => a * b, 1)) {
      throw new TypeError(`Saving ${dir}: adapter tensor ${p.name} [${p.shape}] is missing or has the wrong size`);
    }
    return [PEFT_PREFIX + p.name, { shape: p.shape, data }];
  });
  const files: DirFile[] = [
    [ADAPTER_CONFIG, () => jsonBytes(peftConfig(o.settings, o.base))],
    [ADAPTER_WEIGHTS, () => serializeSafetensors(ordered, { dtype: "f32" })],
    ...extraFiles(dir, o.extra, [ADAPTER_CONFIG, ADAPTER_WEIGHTS, "config.json"]),
  ];
  await writeDirAtomic(dir, files, o.onStage);
}

/** An adapter directory read back, not yet bound to a model. */
export interface LoadedAdapter {
  /** The directory it was read from. */
  dir: string;
  /** adapter_config.json as written. */
  peft: Record<string, unknown>;
  /** Tensors by Crucible's name (PEFT's prefix removed). */
  tensors: Map<string, HostTensor>;
  /** Extra JSON files asked for by name. */
  extra: Record<string, unknown>;
}

/** Whether a directory holds a PEFT adapter (adapter_config.json). */
export function isAdapterDir(dir: string): Promise<boolean> {
  return exists(`${dir.replace(/\/+$/, "")}/${ADAPTER_CONFIG}`);
}

/**
 * Reads a PEFT adapter directory: adapter_config.json (a LoRA one, with no feature Crucible lacks) and its
 * tensors. Bind it to a model with bindAdapter.
 *
 * @example
 * ```ts
 * const { settings, tensors } = bindAdapter(config, await loadAdapterDir("my-adapter"));
 * ```
 */
export async function loadAdapterDir(dir: string, o: { extra?: string[] } = {}): Promise<LoadedAdapter> {
  dir = dir.replace(/\/+$/, "");
  if (!(await exists(`${dir}/${ADAPTER_CONFIG}`))) {
    throw new Deno.errors.NotFound(
      `Loading adapter ${dir}: it has no ${ADAPTER_CONFIG}, so it is not a PEFT adapter directory ` +
        `(${ADAPTER_CONFIG} and ${ADAPTER_WEIGHTS}, as PeftModel.save_pretrained writes them)`,
    );
  }
  const peft = await readJson(`${dir}/${ADAPTER_CONFIG}`);
  refuseFeatures(peft, `${dir}/${ADAPTER_CONFIG}`);
  const file = `${dir}/${ADAPTER_WEIGHTS}`;
  if (!(await exists(file))) {
    throw new Deno.errors.NotFound(
      `Loading adapter ${dir}: ${ADAPTER_WEIGHTS} is missing (adapter_model.bin is not read)`,
    );
  }
  const tensors = new Map<string, HostTensor>();
  for (const [name, t] of await loadSafetensors(file)) {
    if (!name.startsWith(PEFT_PREFIX)) {
      throw new SyntaxError(`${file}: tensor "${name}" does not start with PEFT's "${PEFT_PREFIX}"`);
    }
    tensors.set(name.slice(PEFT_PREFIX.length), t);
  }
  const extra: Record<string, unknown> = {};
  for (const name of o.extra ?? []) extra[name] = await readJson(`${dir}/${name}`);
  return { dir, peft, tensors, extra };
}

/** Refuses what a plain LoRA adapter of the decoder's projections does not have, naming the field. */
function refuseFeatures(p: Record<string, unknown>, file: string): void {
  const bad = (field: string, why: string) => {
    throw new RangeError(`${file}: ${field} ${JSON.stringify(p[field])} is not supported (${why})`);
  };
  if (p.peft_type !== "LORA") bad("peft_type", "only LORA adapters");
  if (p.use_dora === true) bad("use_dora", "DoRA's magnitude vectors are not computed");
  if (p.fan_in_fan_out === true) bad("fan_in_fan_out", "only [out, in] weights, as Qwen and Llama store them");
  if (p.bias !== undefined && p.bias !== "none") bad("bias", "biases are not trained by the adapter");
  if (p.lora_bias === true) bad("lora_bias", "lora_B has no bias");
  const nonEmpty = (v: unknown) => v !== undefined && v !== null && Object.keys(v as object).length > 0;
  if (nonEmpty(p.modules_to_save)) bad("modules_to_save", "only LoRA tensors are loaded");
  if (nonEmpty(p.rank_pattern)) bad("rank_pattern", "one rank for every module");
  if (nonEmpty(p.alpha_pattern)) bad("alpha_pattern", "one alpha for every module");
  if (!Number.isInteger(p.r) || (p.r as number) < 1) bad("r", "a positive integer");
  if (typeof p.lora_alpha !== "number" || !(p.lora_alpha > 0)) bad("lora_alpha", "a positive number");
}

/**
 * Binds an adapter to a model: its settings (r, lora_alpha, use_rslora, and the targets its tensors cover) and its
 * tensors checked against loraTable(config, settings). A tensor whose shape does not fit the model is refused with
 * its name and both shapes; so are unknown and missing tensors.
 */
export function bindAdapter(
  config: ModelConfig,
  a: LoadedAdapter,
): { settings: LoraSettings; tensors: Map<string, Float32Array> } {
  const file = `${a.dir}/${ADAPTER_WEIGHTS}`;
  const modules = new Set<LoraModule>();
  for (const name of a.tensors.keys()) {
    const m = /^model\.layers\.\d+\.(?:self_attn|mlp)\.(\w+)\.lora_[AB]\.weight$/.exec(name)?.[1];
    if (!m || !(m in LORA_MODULES)) {
      throw new SyntaxError(`${file}: tensor "${PEFT_PREFIX}${name}" is not a LoRA A or B of a decoder projection`);
    }
    modules.add(m as LoraModule);
  }
  if (modules.size === 0) throw new SyntaxError(`${file}: no LoRA tensors`);
  const settings: LoraSettings = {
    rank: a.peft.r as number,
    alpha: a.peft.lora_alpha as number,
    targets: resolveTargets(config, [...modules], PEFT_KEYS),
    rslora: a.peft.use_rslora === true,
  };
  checkLora(config, settings, PEFT_KEYS);
  const table = loraTable(config, settings);
  const names = new Set(table.map((p) => p.name));
  for (const name of a.tensors.keys()) {
    if (!names.has(name)) {
      throw new TypeError(
        `${file}: tensor "${PEFT_PREFIX}${name}" has no place in this ${config.architecture} model of ` +
          `${config.numLayers} layers`,
      );
    }
  }
  const tensors = new Map<string, Float32Array>();
  for (const p of table) {
    const t = a.tensors.get(p.name);
    if (!t) throw new SyntaxError(`${file}: tensor "${PEFT_PREFIX}${p.name}" is missing ([${p.shape}] expected)`);
    if (t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i])) {
      // A is [r, in] and B [out, r]: when the base's side agrees, only the rank differs.
      const side = p.name.endsWith(".lora_A.weight") ? 1 : 0;
      const rankOnly = t.shape.length === 2 && t.shape[side] === p.shape[side];
      throw new TypeError(
        `${file}: tensor "${PEFT_PREFIX}${p.name}" has shape [${t.shape}] but this model needs [${p.shape}]; ` +
          (rankOnly
            ? `it does not have adapter_config.json's r ${settings.rank}`
            : "the adapter belongs to a base model of another shape"),
      );
    }
    const at = t.data.findIndex((x) => !Number.isFinite(x));
    if (at >= 0) throw new SyntaxError(`${file}: tensor "${PEFT_PREFIX}${p.name}" holds ${t.data[at]} at index ${at}`);
    tensors.set(p.name, t.data);
  }
  return { settings, tensors };
}

/**
 * The base weights with the adapter merged in: W + s · B · A for each targeted weight (f64 sums, stored f32);
 * every other tensor is the base's own. Costs out · in · r multiply-adds per targeted weight, on the host.
 */
export function mergeAdapter(
  config: ModelConfig,
  base: ReadonlyMap<string, Float32Array>,
  settings: LoraSettings,
  adapter: ReadonlyMap<string, Float32Array>,
): Map<string, Float32Array> {
  const s = loraScale(settings), r = settings.rank;
  const out = new Map(base);
  for (const p of loraTable(config, settings)) {
    if (!p.name.endsWith(".lora_A.weight")) continue;
    const weight = p.name.replace(/\.lora_A\.weight$/, ".weight"), n = loraNames(weight);
    const A = adapter.get(n.a)!, B = adapter.get(n.b)!, W = base.get(weight)!;
    const K = p.shape[1], N = W.length / K, merged = new Float32Array(W.length), row = new Float64Array(K);
    for (let i = 0; i < N; i++) {
      row.fill(0);
      for (let j = 0; j < r; j++) {
        const b = B[i * r + j];
        if (b === 0) continue;
        for (let k = 0; k < K; k++) row[k] += b * A[j * K + k];
      }
      for (let k = 0; k < K; k++) merged[i * K + k] = W[i * K + k] + s * row[k];
    }
    out.set(weight, merged);
  }
  return out;
}
