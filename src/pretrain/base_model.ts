/**
 * Saving a pretraining run's checkpoint (the latest, or the one at a given step) as a base model
 * (`deno task pretrain --save-model DIR`; `deno task export` is the other verb, for ONNX): a Hugging Face
 * directory (config.json, model.safetensors, tokenizer.json, tokenizer_config.json, generation_config.json), its
 * agent settings (crucible.json), the resolved config that rebuilds it (pretrain.yaml) and a README model card
 * written from the run's own records: data recipe, seed, steps, tokens, wall time and the checkpoint's held-out
 * results. What the card says about the task's data is the task's own (its `baseModelWords` hook). The directory also
 * keeps the checkpoint's trainer state (trainer_state.json: step, tokens, time), so that a later session can go on
 * pretraining from it (`deno task pretrain --resume DIR --run-dir NEW`) where the run folder itself is gone.
 */
import { parse } from "yaml";
import { configSource } from "../config/presets.ts";
import { extendVocabulary } from "../model/extend_vocab.ts";
import { insertLayer } from "../model/grow.ts";
import { GENERATION, MODEL_FILES, readJson, saveModelDir, type SaveModelOptions } from "../model/model_dir.ts";
import { parseModelConfig, toHfConfig } from "../model/config.ts";
import { paramCount } from "../model/params.ts";
import type { TinySpec } from "../model/tiny.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { BaseModelWords } from "../task/task.ts";
import { getTask } from "../../tasks/mod.ts";
import { AGENT_FILE, readAgentSettings } from "../train/agent_settings.ts";
import { checkpointName, loadCheckpoint, loadLatestCheckpoint, STATE_FILE } from "../train/checkpoint.ts";
import type { LoadedCheckpoint } from "../train/types.ts";

interface EvalLine {
  phase: string;
  step: number;
  avg: number;
  byCategory: Record<string, { avg: number }>;
  copy?: { names: number; replies: number; first?: number };
  lookup?: { asks: number; exact: number; links?: number; linkTokens?: number };
  recovery?: { refused: number; recovered: number };
}

/**
 * Writes the model directory `out` from the run folder `runDir`: its latest checkpoint, or the one at pretraining
 * step `o.step` (which must have been saved); returns `out`.
 */
export async function saveBaseModel(runDir: string, out: string, o: { step?: number } = {}): Promise<string> {
  const step = o.step;
  const ckpt = step === undefined ? await loadLatestCheckpoint(runDir) : await stepCheckpoint(runDir, step);
  if (ckpt.state.phase !== "pretrain") {
    throw new RangeError(`${runDir} is not a pretraining run (its latest checkpoint is in phase ${ckpt.state.phase})`);
  }
  const configText = await Deno.readTextFile(`${runDir}/config.yaml`);
  const agent = await readAgentSettings(ckpt.dir);
  const evals = (await Deno.readTextFile(`${runDir}/evals.jsonl`).catch(() => "")).split("\n").filter((l) => l.trim())
    .map((l) => JSON.parse(l) as EvalLine).filter((e) => e.phase === "pretrain");
  const config = parse(configText) as Record<string, Record<string, unknown>>;
  const card = modelCard({
    name: out.split("/").filter(Boolean).pop() ?? out,
    role: await baseModelRole(String((config as { task?: unknown }).task ?? "textcraft"), out),
    dir: out.replace(/\/+$/, ""),
    config,
    params: paramCount(ckpt.config),
    layers: ckpt.config.numLayers,
    hidden: ckpt.config.hiddenSize,
    vocab: ckpt.config.vocabSize,
    step: ckpt.state.sftStep,
    tokens: Number(ckpt.state.notes.tokens ?? 0),
    seconds: Number(ckpt.state.notes.seconds ?? 0),
    adapters: ckpt.state.notes.adapters as Record<string, number> | undefined,
    // The checkpoint's own evaluation (the last one up to its step), not a later one of the run.
    last: evals.filter((e) => e.step <= ckpt.state.sftStep).at(-1),
    runStep: Math.max(ckpt.state.sftStep, ...evals.map((e) => e.step)),
    words: taskWords(config),
    grown: ckpt.state.notes.grown as Growth[] | undefined,
    extended: ckpt.state.notes.vocab as VocabGrowth[] | undefined,
  });
  const enc = new TextEncoder();
  await saveModelDir(out, {
    config: ckpt.config,
    tensors: ckpt.tensors,
    tokenizer: ckpt.tokenizer,
    dtype: "f32",
    extra: {
      ...(agent ? { [AGENT_FILE]: agent } : {}),
      "pretrain.yaml": enc.encode(configText),
      [STATE_FILE]: enc.encode(JSON.stringify(ckpt.state, null, 2)),
      "README.md": enc.encode(card),
    },
  });
  return out;
}

/** The files of a saved base model that a checkpoint folder holds too (the checkpoint's own names). */
const CHECKPOINT_FILES = [...MODEL_FILES, GENERATION, AGENT_FILE, STATE_FILE];

/** Whether `dir` is a model directory saved by {@linkcode saveBaseModel} (not a run folder). */
export async function isSavedBaseModel(dir: string): Promise<boolean> {
  const exists = (f: string) => Deno.stat(`${dir}/${f}`).then(() => true, () => false);
  return await exists("pretrain.yaml") && await exists("model.safetensors") && !await exists("checkpoints/latest");
}

/**
 * Starts the run folder `runDir` from the saved base model `modelDir`, so that `--resume` goes on from its step: the
 * config it was pretrained with, and one checkpoint of its weights and trainer state. AdamW's moments are not in a
 * model directory, so the run goes on with them at zero (the next steps' updates are larger for a few steps, as at
 * a run's start, before the moments fill). Returns the step it goes on from.
 */
export async function runFromBaseModel(modelDir: string, runDir: string): Promise<number> {
  let state: { phase?: string; sftStep?: number };
  try {
    state = JSON.parse(await Deno.readTextFile(`${modelDir}/${STATE_FILE}`));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new TypeError(
      `${modelDir} has no ${STATE_FILE} (it was saved before base models kept their trainer state), so its step is ` +
        `unknown; start a new pretraining from its weights with model.path=${modelDir}`,
    );
  }
  if (state.phase !== "pretrain" || !Number.isInteger(state.sftStep)) {
    throw new TypeError(`${modelDir}/${STATE_FILE} is not a pretraining checkpoint's state`);
  }
  const dir = `${runDir}/checkpoints/${checkpointName("pretrain", state.sftStep!)}`;
  await Deno.mkdir(dir, { recursive: true });
  for (const f of CHECKPOINT_FILES) {
    await Deno.copyFile(`${modelDir}/${f}`, `${dir}/${f}`).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound) || f === "model.safetensors") throw e;
    });
  }
  await Deno.copyFile(`${modelDir}/pretrain.yaml`, `${runDir}/config.yaml`);
  await Deno.writeTextFile(`${runDir}/checkpoints/latest`, `${checkpointName("pretrain", state.sftStep!)}\n`);
  return state.sftStep!;
}

/** One growth of a run's model, as its trainer state keeps it (notes.grown) for the model card. */
export interface Growth {
  /** The pretraining step it was grown at. */
  step: number;
  /** The new layer's index. */
  at: number;
  /** Layers after it. */
  layers: number;
}

/**
 * Refuses a growth whose shape is not the saved model's with one more layer, or whose place is outside it; the
 * error names the shape to give.
 */
export async function checkGrowth(modelDir: string, spec: TinySpec, shapeName: string, at: number): Promise<void> {
  const saved = toHfConfig(parseModelConfig(await readJson(`${modelDir}/config.json`), `${modelDir}/config.json`));
  const L = Number(saved.num_hidden_layers);
  if (!Number.isInteger(at) || at < 0 || at > L) {
    throw new RangeError(`--add-layer ${at}: ${modelDir} has ${L} layers, so the new one's place is 0 to ${L}`);
  }
  const { init_std: _std, seed: _seed, ...shape } = spec;
  const differ = Object.entries(shape).filter(([k, v]) =>
    k === "num_hidden_layers" ? v !== L + 1 : JSON.stringify(v) !== JSON.stringify(saved[k])
  );
  if (differ.length > 0) {
    throw new TypeError(
      `--add-layer grows ${modelDir} to ${L + 1} layers, but model.tiny=${shapeName} differs from that in ` +
        `${differ.map(([k, v]) => `${k} (${v}, grown: ${k === "num_hidden_layers" ? L + 1 : saved[k]})`).join(", ")}` +
        `: name a shape that is ${modelDir}'s with num_hidden_layers ${L + 1}`,
    );
  }
}

/**
 * Grows the checkpoint that `latest` names in `runDir` (a run just started by {@linkcode runFromBaseModel}) by one
 * layer at `o.at` that changes nothing (model/grow.ts), in place; the trainer state keeps the growth in notes.grown.
 * Returns the grown layer count.
 */
export async function growRunCheckpoint(
  runDir: string,
  o: { at: number; seed: number; std: number },
): Promise<number> {
  const growth = await rewriteStartCheckpoint(runDir, "grows", "grown", (ckpt) => {
    const grown = insertLayer(ckpt.config, ckpt.tensors, o);
    const note: Growth = { step: ckpt.state.sftStep, at: o.at, layers: grown.config.numLayers };
    return { ...grown, tokenizer: ckpt.tokenizer, note };
  });
  return growth!.layers;
}

/**
 * Rewrites the checkpoint that `latest` names in `runDir`, a run just started from a saved model (so without
 * optimizer moments), with the model `change` makes of it, in place, and appends `change`'s note to the trainer
 * state's list `notes[key]`; a `change` that returns nothing leaves the checkpoint as it is. Returns the note.
 */
async function rewriteStartCheckpoint<T>(
  runDir: string,
  verb: string,
  key: string,
  change: (
    ckpt: LoadedCheckpoint,
  ) => Pick<SaveModelOptions, "config" | "tensors" | "tokenizer"> & { note: T } | undefined,
): Promise<T | undefined> {
  const ckpt = await loadLatestCheckpoint(runDir);
  if (ckpt.moments) throw new RangeError(`${ckpt.dir} has optimizer moments: only a run started from a model ${verb}`);
  const changed = change(ckpt);
  if (!changed) return undefined;
  const state = structuredClone(ckpt.state);
  state.notes[key] = [...(state.notes[key] as T[] | undefined ?? []), changed.note];
  const agent = await readAgentSettings(ckpt.dir);
  await saveModelDir(ckpt.dir, {
    config: changed.config,
    tensors: changed.tensors,
    tokenizer: changed.tokenizer,
    dtype: ckpt.dtype,
    generationConfig: await readJson(`${ckpt.dir}/${GENERATION}`),
    extra: { ...(agent ? { [AGENT_FILE]: agent } : {}), [STATE_FILE]: state },
  });
  return changed.note;
}

/** One extension of a run's vocabulary, as its trainer state keeps it (notes.vocab) for the model card. */
export interface VocabGrowth {
  /** The pretraining step it was extended at. */
  step: number;
  /** Tokens appended. */
  added: number;
}

/**
 * Appends to the checkpoint that `latest` names in `runDir` (a run just started by {@linkcode runFromBaseModel}) the
 * tokens of `target` its tokenizer lacks, new embedding rows with them (model/extend_vocab.ts), in place; the trainer
 * state keeps the extension in notes.vocab. Nothing to add leaves the checkpoint as it is. Returns the added tokens.
 */
export async function extendRunCheckpoint(runDir: string, target: Tokenizer): Promise<string[]> {
  let added: string[] = [];
  await rewriteStartCheckpoint(runDir, "extends", "vocab", (ckpt) => {
    if (!ckpt.tokenizer) throw new TypeError(`${ckpt.dir} has no tokenizer.json: there is no vocabulary to extend`);
    const ext = extendVocabulary({ config: ckpt.config, tensors: ckpt.tensors, tokenizer: ckpt.tokenizer }, target);
    added = ext.added;
    if (added.length === 0) return undefined;
    const note: VocabGrowth = { step: ckpt.state.sftStep, added: added.length };
    return { config: ext.config, tensors: ext.tensors, tokenizer: ext.tokenizer, note };
  });
  return added;
}

/**
 * "It is the base model of `deno task train X`." where X's shipped config (or, for a curriculum, its base run config)
 * starts from `out`, else how to start from it: a model saved while its pretraining goes on is not the main job's base
 * until the config names it.
 */
export async function baseModelRole(task: string, out: string): Promise<string> {
  const norm = (p: string) => p.replace(/^\.\//, "").replace(/\/+$/, "");
  let shipped: string | undefined;
  try {
    type Run = { model?: { path?: unknown } };
    type Shipped = Run & { curriculum?: { base?: unknown; stages?: { config?: Run }[] } };
    const c = parse((await configSource(task)).text) as Shipped;
    // A curriculum (bfcl's EnvTuning stages) starts from its first stage's model, else its base run config's.
    const base = c?.curriculum?.base;
    const first = c?.curriculum?.stages?.[0]?.config?.model?.path;
    const from = typeof base === "string" ? parse((await configSource(base)).text) as Run : c;
    const path = first ?? from?.model?.path;
    if (typeof path === "string") shipped = path;
  } catch {
    // A task without a shipped config of its name: no main job to be the base of.
  }
  return shipped !== undefined && norm(shipped) === norm(out)
    ? `It is the base model of \`deno task train ${task}\`.`
    : `A base model for \`deno task train ${task} model.path=${
      norm(out)
    }\`; the shipped config does not start from it.`;
}

/**
 * Where the time went, by WebGPU adapter ("on NVIDIA H200 0.16 h, llvmpipe (...) 2.1 h"); nothing for runs from before
 * it was kept.
 */
function machines(adapters: Record<string, number> | undefined): string {
  const parts = Object.entries(adapters ?? {}).filter(([, s]) => s > 0);
  if (parts.length === 0) return "";
  return `, on ${parts.map(([name, s]) => `${name} ${(s / 3600).toFixed(2)} h`).join(", ")}`;
}

/** The card's words about the run's task: its own hook's, or plain ones for a task without it. */
function taskWords(config: Record<string, Record<string, unknown>>): BaseModelWords {
  const task = (config as { task?: unknown }).task;
  const name = typeof task === "string" ? task : "textcraft";
  const recipe = { pretrain: config.pretrain ?? {}, taskOptions: config.task_options ?? {} };
  const words = getTask(name).baseModelWords?.(recipe);
  if (words) return words;
  const p = recipe.pretrain;
  return {
    vocabulary: "one token per word",
    trainedOn: `${name}'s synthetic tasks only.`,
    data: `Every batch is generated on the fly from (seed ${p.seed}, step) by ${name}'s synthetic task generator, ` +
      `each task played by its demonstration policy; a share of generic copy strings of its names (${p.copy_share} ` +
      `at the start) is mixed in. Held-out tasks come from seed ${p.eval_seed}, which training never draws from.`,
    heldOut: "synthetic tasks",
    names: "names",
  };
}

/** A pretraining run's checkpoint at `step`, or an error naming the step and how checkpoints are kept. */
async function stepCheckpoint(runDir: string, step: number) {
  const name = checkpointName("pretrain", step);
  try {
    return await loadCheckpoint(`${runDir}/checkpoints/${name}`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new Deno.errors.NotFound(
      `${runDir} has no checkpoint at step ${step} (checkpoints/${name}); pretraining saves one at the end of ` +
        `every chunk (pretrain.chunk_steps)`,
    );
  }
}

/**
 * The card's line on which evaluation its held-out numbers are: empty when it is the checkpoint's own, else the
 * step of the last one before it (a run stopped between evaluations, by --minutes or a signal, saves a checkpoint
 * that no evaluation has seen).
 */
export function evaluatedAt(evalStep: number | undefined, step: number): string {
  if (evalStep === undefined || evalStep === step) return "";
  return `\nFrom the evaluation at step ${evalStep}, the last at or before this checkpoint (step ${step}); the run ` +
    "evaluates at the end of each chunk (pretrain.chunk_steps), and this one was saved between two.\n";
}

function modelCard(m: {
  name: string;
  /** Whose base it is: the sentence that ends the card's first paragraph. */
  role: string;
  /** The directory as the export was asked to write it: the card's rebuild line names its pretrain.yaml. */
  dir: string;
  config: Record<string, Record<string, unknown>>;
  params: number;
  layers: number;
  hidden: number;
  vocab: number;
  step: number;
  tokens: number;
  seconds: number;
  /** Seconds by WebGPU adapter (state.notes.adapters), where the run kept them. */
  adapters?: Record<string, number>;
  last?: EvalLine;
  /** The furthest step the run reached (past `step` when an earlier checkpoint is exported). */
  runStep: number;
  /** The task's own words (its `baseModelWords` hook, or the generic ones). */
  words: BaseModelWords;
  /** Layers added on the way (state.notes.grown), oldest first. */
  grown?: Growth[];
  /** Vocabulary extensions on the way (state.notes.vocab), oldest first. */
  extended?: VocabGrowth[];
}): string {
  const p = m.config.pretrain ?? {};
  const partial = typeof p.steps === "number" && m.step < p.steps;
  const pct = (x: number | undefined) => (x === undefined ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const depths = m.last
    ? Object.entries(m.last.byCategory).map(([k, r]) => `${k}: ${pct(r.avg)}`).join(", ")
    : "not evaluated";
  return `# ${m.name}

A ${(m.params / 1e6).toFixed(2)} M-parameter Qwen2-architecture model (${m.layers} layers, hidden ${m.hidden},
word-level vocabulary of ${m.vocab} tokens with ${m.words.vocabulary}), pretrained by Crucible's
\`deno task pretrain\` on ${m.words.trainedOn} ${m.role}

## Data

${m.words.data}

## Training

${m.step}${partial ? ` of the recipe's ${p.steps}` : ""} optimizer steps of about ${p.batch_tokens} tokens (${
    (m.tokens / 1e6).toFixed(1)
  } M tokens in all), AdamW at
${p.lr} with a ${(p.lr_schedule as Record<string, unknown>)?.type} schedule, in ${
    (m.seconds / 3600).toFixed(2)
  } hours of wall time (steps and held-out evaluations, restarts left out)${machines(m.adapters)}.${
    m.runStep > m.step
      ? ` The run went on to step ${m.runStep}; this is its checkpoint at step ${m.step} (every held-out evaluation is in the run's evals.jsonl).`
      : partial
      ? ` This is the run's checkpoint at step ${m.step}: pretraining goes on from it, and a later export replaces it.`
      : ""
  }${
    (m.grown ?? []).map((g) =>
      ` At step ${g.step} it grew to ${g.layers} layers: a new layer at index ${g.at} that started as a no-op (zero ` +
      "o_proj and down_proj, the same logits; `deno task pretrain --add-layer`)."
    ).join("")
  }${
    (m.extended ?? []).map((x) =>
      ` At step ${x.step} its vocabulary gained ${x.added} tokens, appended after the old ids (each new embedding ` +
      "row the mean of the rows of its text's old tokens, the same logits on the old ones; " +
      "`deno task pretrain --extend-vocab`)."
    ).join("")
  }

## Held-out results (greedy, ${p.eval_tasks} ${m.words.heldOut} the model never saw)
${evaluatedAt(m.last?.step, m.step)}
- success: ${pct(m.last?.avg)} (${depths})
- ${m.words.names} copied right (teacher-forced): ${pct(m.last?.copy?.names)}; replies exactly right: ${
    pct(m.last?.copy?.replies)
  }${m.last?.copy?.first !== undefined ? ` (first replies: ${pct(m.last.copy.first)})` : ""}${
    m.last?.lookup
      ? `\n- look-up drills (teacher-forced, ${m.last.lookup.asks} asks on fresh lists): ${
        pct(m.last.lookup.exact)
      } answered exactly${
        m.last.lookup.links !== undefined
          ? `; their link tokens (${m.words.links ?? "the task's link phrases"}) ${
            pct(m.last.lookup.links)
          } right of ${m.last.lookup.linkTokens}`
          : ""
      }`
      : ""
  }${
    m.last?.recovery
      ? `\n- refused actions whose next action was accepted (recovery): ${m.last.recovery.recovered} of ${m.last.recovery.refused}`
      : ""
  }

## Rebuild

\`deno task pretrain ${m.dir}/pretrain.yaml\` replays the same batches from the same seed; on the same adapter it
gives the same weights bit for bit (floating-point results can differ between GPU drivers)${
    partial ? `: these are its checkpoint at step ${m.step}, \`checkpoints/${checkpointName("pretrain", m.step)}\`` : ""
  }.
`;
}
