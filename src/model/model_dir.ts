/**
 * Hugging Face model directories: config.json, model.safetensors (or shards with model.safetensors.index.json),
 * tokenizer.json, tokenizer_config.json and generation_config.json, plus any extra files a run keeps beside the
 * model (optimizer and run state). Saving is atomic: everything is written and fsynced in a temporary sibling
 * directory that is then renamed into place, so a crash mid-save leaves the previous directory as it was.
 */
import { type ModelConfig, parseModelConfig, toHfConfig } from "./config.ts";
import { LM_HEAD, paramTable } from "./params.ts";
import { type HostTensor, loadSafetensors, type SaveDType, serializeSafetensors, SHARD_INDEX } from "./safetensors.ts";
import { Tokenizer } from "./tokenizer.ts";

/** Files a model directory holds (besides extras). */
export const MODEL_FILES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"];
export const GENERATION = "generation_config.json";

const TORCH_DTYPE: Record<SaveDType, string> = { f32: "float32", f16: "float16", bf16: "bfloat16" };

/** What a model directory holds, for error messages. */
export const HF_DIR = "A Hugging Face model directory holds config.json, model.safetensors (or shards with " +
  "model.safetensors.index.json), tokenizer.json and tokenizer_config.json.";

/** What saveModelDir writes. */
export interface SaveModelOptions {
  /** The model's configuration, written as config.json. */
  config: ModelConfig;
  /** Every tensor of paramTable(config), by Hugging Face name. */
  tensors: Map<string, Float32Array>;
  /** Its files are written unchanged; its special tokens give the default generation config. */
  tokenizer?: Tokenizer;
  /** Storage dtype of model.safetensors (default f32). */
  dtype?: SaveDType;
  /** generation_config.json; by default eos (and bos, pad) ids from the config and tokenizer. */
  generationConfig?: Record<string, unknown>;
  /** More files by name: a Uint8Array is written as is, anything else as JSON. */
  extra?: Record<string, unknown>;
  /** Told when the files are written (not yet in place) and when an old directory was moved aside (tests). */
  onStage?: (stage: "written" | "aside") => void;
}

/** What loadModelDir returns. */
export interface LoadedModel {
  /** The checked configuration from config.json. */
  config: ModelConfig;
  /** The dtype the weights are stored in (the most common one when they mix): a checkpoint is saved the same way. */
  dtype: SaveDType;
  /** Every tensor of paramTable(config), by Hugging Face name, in table order. */
  tensors: Map<string, Float32Array>;
  /** The tokenizer, when the directory has tokenizer.json. */
  tokenizer?: Tokenizer;
  /** generation_config.json, when the directory has one. */
  generationConfig?: Record<string, unknown>;
  /** The extra JSON files asked for by name (read binary extras with Deno.readFile). */
  extra: Record<string, unknown>;
}

/**
 * Writes a model directory atomically, replacing `dir` if it exists.
 *
 * @example
 * ```ts
 * await saveModelDir("runs/a/step-100", { config, tensors, tokenizer, dtype: "f32" });
 * ```
 */
export async function saveModelDir(dir: string, opts: SaveModelOptions): Promise<void> {
  dir = dir.replace(/\/+$/, "");
  if (opts.tokenizer) checkVocab(opts.config, opts.tokenizer, `Saving ${dir}`);
  const ordered = checkTensors(opts.config, withShapes(opts.config, opts.tensors, dir), `Saving ${dir}`);
  const dtype = opts.dtype ?? "f32";
  const files: DirFile[] = [
    ["config.json", () => jsonBytes({ ...toHfConfig(opts.config), torch_dtype: TORCH_DTYPE[dtype] })],
    ["model.safetensors", () => serializeSafetensors(ordered, { dtype })],
  ];
  if (opts.tokenizer) {
    files.push(["tokenizer.json", () => jsonBytes(opts.tokenizer!.files.tokenizer)]);
    files.push(["tokenizer_config.json", () => jsonBytes(opts.tokenizer!.files.config)]);
  }
  files.push([GENERATION, () => jsonBytes(opts.generationConfig ?? defaultGeneration(opts.config, opts.tokenizer))]);
  files.push(...extraFiles(dir, opts.extra, [...MODEL_FILES, GENERATION, SHARD_INDEX]));
  await writeDirAtomic(dir, files, opts.onStage);
}

/** A file of a directory being written: its name and its bytes, made when written. */
export type DirFile = [string, () => Uint8Array];

/** Extra files by name (a Uint8Array is written as is, anything else as JSON); reserved or odd names are refused. */
export function extraFiles(dir: string, extra: Record<string, unknown> = {}, reserved: readonly string[]): DirFile[] {
  return Object.entries(extra).map(([name, value]) => {
    if (!/^[\w][\w.-]*$/.test(name) || reserved.includes(name)) {
      throw new RangeError(`Saving ${dir}: extra file name "${name}" is not a plain, unreserved file name`);
    }
    return [name, () => value instanceof Uint8Array ? value : jsonBytes(value)];
  });
}

/**
 * Writes a directory atomically, replacing `dir` if it exists: every file is written and fsynced in a temporary
 * sibling that is then renamed into place. `onStage` is told when the files are written and when an old directory
 * was moved aside (tests).
 */
export async function writeDirAtomic(
  dir: string,
  files: readonly DirFile[],
  onStage?: (stage: "written" | "aside") => void,
): Promise<void> {
  const stamp = `${Deno.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const tmp = `${dir}.tmp-${stamp}`;
  await Deno.mkdir(tmp, { recursive: true });
  try {
    for (const [name, bytes] of files) await writeSynced(`${tmp}/${name}`, bytes());
    await syncDir(tmp);
    onStage?.("written");
    // rename(2) cannot replace a non-empty directory: move the old one aside first. Between the two renames
    // `dir` is briefly absent (loadModelDir then names the aside copy); it is never half-written.
    const old = `${dir}.old-${stamp}`;
    const had = await exists(dir);
    if (had) {
      await Deno.rename(dir, old);
      onStage?.("aside");
    }
    await Deno.rename(tmp, dir);
    await syncDir(parentOf(dir));
    if (had) await Deno.remove(old, { recursive: true });
  } catch (e) {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
    throw e;
  }
}

/**
 * Loads a model directory: checks config.json, that the weights hold exactly the tensors of paramTable(config)
 * with their shapes, and the tokenizer (if tokenizer.json is present) against the vocabulary size.
 *
 * @example
 * ```ts
 * const { config, tensors, tokenizer } = await loadModelDir("Qwen2.5-0.5B-Instruct");
 * ```
 */
export async function loadModelDir(dir: string, opts: { extra?: string[] } = {}): Promise<LoadedModel> {
  dir = dir.replace(/\/+$/, "");
  if (!(await exists(dir))) {
    const hub = /^[\w.-]+\/[\w.-]+$/.test(dir) && !dir.startsWith(".")
      ? `. If "${dir}" is a Hugging Face Hub name, the commands' --model downloads it; from code, pass it ` +
        "through resolveModel (src/model/hub.ts) first"
      : "";
    throw new Deno.errors.NotFound(`Loading model directory ${dir}: not found${await aside(dir)}${hub}`);
  }
  if (!(await exists(`${dir}/config.json`))) {
    throw new Deno.errors.NotFound(`Loading ${dir}: it has no config.json, so it is not a model directory. ${HF_DIR}`);
  }
  const config = parseModelConfig(await readJson(`${dir}/config.json`), `${dir}/config.json`);
  const weights = (await exists(`${dir}/model.safetensors`)) ? `${dir}/model.safetensors` : `${dir}/${SHARD_INDEX}`;
  if (!(await exists(weights))) {
    throw new SyntaxError(
      `Loading ${dir}: it has no weights (model.safetensors, or ${SHARD_INDEX} with its shards). ${HF_DIR}`,
    );
  }
  const ordered = checkTensors(config, await loadSafetensors(weights), weights);
  const tensors = new Map(ordered.map(([name, t]) => [name, t.data]));
  const counts = new Map<SaveDType, number>();
  for (const [, t] of ordered) counts.set(t.stored ?? "f32", (counts.get(t.stored ?? "f32") ?? 0) + t.data.length);
  const dtype = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "f32";
  for (const [name, data] of tensors) {
    const at = data.findIndex((x) => !Number.isFinite(x));
    if (at >= 0) {
      throw new SyntaxError(
        `Loading ${dir}: tensor "${name}" holds a non-finite value (${data[at]} at index ${at}); ` +
          "the model diverged or the file is damaged, so it is not used",
      );
    }
  }
  const tokenizer = (await exists(`${dir}/tokenizer.json`)) ? await Tokenizer.load(dir) : undefined;
  if (tokenizer) checkVocab(config, tokenizer, `Loading ${dir}`);
  const generationConfig = (await exists(`${dir}/${GENERATION}`)) ? await readJson(`${dir}/${GENERATION}`) : undefined;
  const extra: Record<string, unknown> = {};
  for (const name of opts.extra ?? []) extra[name] = await readJson(`${dir}/${name}`);
  return { config, dtype, tensors, tokenizer, generationConfig, extra };
}

/** Ids that end generation: eos of generation_config.json, of config.json and of the tokenizer, deduplicated. */
export function stopTokenIds(model: Pick<LoadedModel, "config" | "generationConfig" | "tokenizer">): number[] {
  const ids = new Set(model.config.eosTokenIds);
  for (const id of [model.generationConfig?.eos_token_id].flat()) if (typeof id === "number") ids.add(id);
  if (model.tokenizer?.special.eos) ids.add(model.tokenizer.special.eos.id);
  return [...ids];
}

/**
 * The tensors of paramTable(config) in table order, checked: each present with its shape, nothing else. A tied
 * model's checkpoint may still carry `lm_head.weight` (some exporters write the tied copy): it is ignored, as
 * Hugging Face ignores it when tie_word_embeddings is true.
 */
export function checkTensors(
  config: ModelConfig,
  tensors: Map<string, HostTensor>,
  source: string,
): [string, HostTensor][] {
  const table = paramTable(config);
  const names = new Set(table.map((p) => p.name));
  for (const name of tensors.keys()) {
    if (!names.has(name) && !(name === LM_HEAD && config.tieWordEmbeddings)) {
      throw new SyntaxError(`${source}: tensor "${name}" is not a parameter of this ${config.architecture} config`);
    }
  }
  return table.map((p) => {
    const t = tensors.get(p.name);
    if (!t) throw new SyntaxError(`${source}: tensor "${p.name}" is missing (shape [${p.shape}] expected)`);
    if (t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i])) {
      throw new TypeError(`${source}: tensor "${p.name}" has shape [${t.shape}] but the config needs [${p.shape}]`);
    }
    return [p.name, t];
  });
}

/** Every token id must have an embedding row (the model may have more rows than tokens). */
function checkVocab(config: ModelConfig, tokenizer: Tokenizer, action: string): void {
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new RangeError(
      `${action}: tokenizer.json has ${tokenizer.vocabSize} ids but config.json's vocab_size (the embedding's rows) ` +
        `is ${config.vocabSize}; the tokenizer belongs to another model`,
    );
  }
}

function withShapes(config: ModelConfig, tensors: Map<string, Float32Array>, dir: string): Map<string, HostTensor> {
  const shapes = new Map(paramTable(config).map((p) => [p.name, p.shape]));
  const out = new Map<string, HostTensor>();
  for (const [name, data] of tensors) {
    const shape = shapes.get(name) ?? [data.length];
    const count = shape.reduce((a, b) => a * b, 1);
    if (data.length !== count) {
      throw new TypeError(
        `Saving ${dir}: tensor "${name}" has ${data.length} values but shape [${shape}] needs ${count}`,
      );
    }
    out.set(name, { shape, data });
  }
  return out;
}

function defaultGeneration(config: ModelConfig, t?: Tokenizer): Record<string, unknown> {
  const eos = stopTokenIds({ config, tokenizer: t });
  const out: Record<string, unknown> = {};
  if (config.bosTokenId !== undefined) out.bos_token_id = config.bosTokenId;
  if (eos.length > 0) out.eos_token_id = eos.length === 1 ? eos[0] : eos;
  if (t?.special.pad) out.pad_token_id = t.special.pad.id;
  return out;
}

/** A value as pretty-printed JSON bytes with a final newline. */
export function jsonBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value, null, 2) + "\n");
}

/** Reads a JSON file; malformed JSON is a SyntaxError naming the file. */
export async function readJson(path: string): Promise<Record<string, unknown>> {
  const text = await Deno.readTextFile(path);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`Reading ${path}: ${(e as Error).message}`);
  }
}

async function writeSynced(path: string, bytes: Uint8Array): Promise<void> {
  const f = await Deno.open(path, { write: true, createNew: true });
  try {
    for (let at = 0; at < bytes.length;) at += await f.write(bytes.subarray(at));
    await f.sync();
  } finally {
    f.close();
  }
}

/** fsync of a directory makes its renames durable; platforms that cannot open directories skip it. */
async function syncDir(path: string): Promise<void> {
  try {
    const d = await Deno.open(path, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch {
    // Not supported here (Windows): the rename is still atomic, only not yet durable.
  }
}

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

/** Whether a path exists (other errors than NotFound are thrown). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** A hint naming the copy a save interrupted between its two renames left aside. */
async function aside(dir: string): Promise<string> {
  const base = dir.slice(dir.lastIndexOf("/") + 1) + ".old-";
  try {
    for await (const e of Deno.readDir(parentOf(dir))) {
      if (e.name.startsWith(base)) return `; an interrupted save left ${parentOf(dir)}/${e.name}: rename it to ${dir}`;
    }
  } catch {
    // The parent is missing too: no hint.
  }
  return "";
}
