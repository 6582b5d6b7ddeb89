/**
 * Run checkpoints: a Hugging Face model directory (loadable by Hugging Face tools and by `--model`) plus the
 * optimizer's moments (`optimizer.safetensors`) and the trainer's state (`trainer_state.json`: step counters, data
 * position, seeds), written atomically by saveModelDir. `checkpoints/latest` names the newest complete one; it is
 * replaced by rename after the checkpoint is fully written, so a crash mid-save never leaves a pointer to a
 * checkpoint that loads wrong. A LoRA run's checkpoint is a PEFT adapter directory instead (adapter_config.json,
 * adapter_model.safetensors) with the same extras, the moments being the adapter's: the frozen base is not saved
 * again, and resuming reads it from where the run loaded it.
 */
import { loadModelDir, saveModelDir, stopTokenIds } from "../model/model_dir.ts";
import type { ModelConfig } from "../model/config.ts";
import { loadSafetensors, type SaveDType, serializeSafetensors } from "../model/safetensors.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { LoraAdapters } from "../model/lora.ts";
import { bindAdapter, isAdapterDir, loadAdapterDir, saveAdapterDir } from "../model/peft.ts";
import type { TensorSet } from "../model/weights.ts";
import type { AdamW } from "../update/optimizer.ts";
import { AGENT_FILE, type AgentSettings } from "./agent_settings.ts";
import { faultPoint } from "./faults.ts";
import type { HostModel, LoadedCheckpoint, Moments, TrainerState } from "./types.ts";

/** The trainer state's file in a checkpoint folder (and in a base model saved from one). */
export const STATE_FILE = "trainer_state.json";
const OPTIMIZER = "optimizer.safetensors";

/**
 * The trainer state of a run that starts from nothing, in `phase` ("pretrain"; "sft" when the run warm-starts, else
 * its learner's phase): what trainer_state.json holds before any step. Training and pretraining both start from it.
 */
export function freshState(phase: TrainerState["phase"]): TrainerState {
  return {
    version: 1,
    phase,
    sftStep: 0,
    rlStep: 0,
    optimizerStep: 0,
    data: { epoch: 0, offset: 0 },
    reference: null,
    notes: {},
  };
}

/** Folder name of a checkpoint. */
export function checkpointName(phase: TrainerState["phase"], step: number): string {
  return `${phase}-step-${String(step).padStart(6, "0")}`;
}

/** The critic's weights and its optimizer's moments beside a checkpoint's model. */
const CRITIC = "critic.safetensors";
const CRITIC_OPTIMIZER = "critic_optimizer.safetensors";

/** An optimizer's moments as one safetensors file (`m.<name>`, `v.<name>`), f32. */
async function momentsFile(weights: TensorSet, opt: AdamW): Promise<Uint8Array> {
  const [m, v] = await Promise.all([opt.m.toHost(), opt.v.toHost()]);
  const moments: [string, { shape: number[]; data: Float32Array }][] = [];
  for (const spec of weights.specs) {
    moments.push([`m.${spec.name}`, { shape: spec.shape, data: m.get(spec.name)! }]);
    moments.push([`v.${spec.name}`, { shape: spec.shape, data: v.get(spec.name)! }]);
  }
  return serializeSafetensors(moments, { dtype: "f32" });
}

/** Reads a moments file; undefined when the checkpoint has none. */
async function readMoments(path: string): Promise<Moments | undefined> {
  try {
    const opt = await loadSafetensors(path);
    const m = new Map<string, Float32Array>(), v = new Map<string, Float32Array>();
    for (const [key, t] of opt) (key.startsWith("m.") ? m : v).set(key.slice(2), t.data);
    return { m, v };
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    return undefined;
  }
}

/** Saves model, optimizer and state into `<runDir>/checkpoints/<name>` and points `latest` at it. */
export async function saveCheckpoint(runDir: string, name: string, c: {
  config: ModelConfig;
  weights: TensorSet;
  tokenizer?: Tokenizer;
  opt?: AdamW;
  state: TrainerState;
  dtype?: SaveDType;
  /** The agent's settings (crucible.json), so the checkpoint evaluates the same anywhere. */
  agent?: AgentSettings;
  /** PPO's critic: its weights and moments sit next to the actor's (critic.safetensors, critic_optimizer...). */
  critic?: { weights: TensorSet; opt: AdamW };
  /** LoRA: the adapter is saved (PEFT's format, `base` its base_model_name_or_path) instead of the weights. */
  adapter?: { lora: LoraAdapters; base: string };
  /** More JSON files by name (a rollout source's episodes played ahead). */
  files?: Record<string, unknown>;
}): Promise<string> {
  const dir = `${runDir}/checkpoints/${name}`;
  await Deno.mkdir(`${runDir}/checkpoints`, { recursive: true });
  const trained = c.adapter?.lora.tensors ?? c.weights;
  const tensors = await trained.toHost();
  const extra: Record<string, unknown> = { ...c.files, [STATE_FILE]: c.state };
  if (c.agent) extra[AGENT_FILE] = c.agent;
  if (c.opt) extra[OPTIMIZER] = await momentsFile(trained, c.opt);
  if (c.critic) {
    const w = await c.critic.weights.toHost();
    extra[CRITIC] = serializeSafetensors(
      c.critic.weights.specs.map((s) => [s.name, { shape: s.shape, data: w.get(s.name)! }]),
    );
    extra[CRITIC_OPTIMIZER] = await momentsFile(c.critic.weights, c.critic.opt);
  }
  const bad = [...tensors].find(([, t]) => !t.every(Number.isFinite));
  if (bad) {
    throw new RangeError(
      `Not saving ${dir}: parameter ${bad[0]} holds non-finite values. Training diverged; ` +
        "lower the learning rate or check the optimizer settings (betas, eps), then resume from the last checkpoint",
    );
  }
  const files = { config: c.config, tensors, extra, onStage: (s: "written" | "aside") => faultPoint(`${s} ${name}`) };
  if (c.adapter) {
    await saveAdapterDir(dir, { settings: c.adapter.lora.settings, base: c.adapter.base, ...files });
  } else {
    await saveModelDir(dir, { tokenizer: c.tokenizer, dtype: c.dtype ?? "f32", ...files });
  }
  faultPoint(`saved ${name}`);
  const tmp = `${runDir}/checkpoints/latest.tmp-${Deno.pid}`;
  await Deno.writeTextFile(tmp, name + "\n");
  await Deno.rename(tmp, `${runDir}/checkpoints/latest`);
  faultPoint(`pointed ${name}`);
  return dir;
}

/**
 * Removes what a killed save leaves behind in a run's checkpoints folder: half-written `*.tmp-*` directories and
 * pointers, `*.old-*` copies moved aside, and step checkpoints of `prefix` other than the newest `keep` and the one
 * `latest` names (older periodic checkpoints a save had not yet pruned).
 */
export async function tidyCheckpoints(runDir: string, o: { prefix?: string; keep?: number } = {}): Promise<void> {
  const root = `${runDir}/checkpoints`;
  let names: string[];
  try {
    names = [];
    for await (const e of Deno.readDir(root)) names.push(e.name);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
  const latest = await Deno.readTextFile(`${root}/latest`).then((t) => t.trim()).catch(() => "");
  const stale = names.filter((n) => /\.(tmp|old)-/.test(n));
  if (o.prefix) {
    const steps = names.filter((n) => n.startsWith(`${o.prefix}-step-`) && !/\.(tmp|old)-/.test(n)).sort();
    stale.push(...steps.slice(0, Math.max(0, steps.length - (o.keep ?? 1))).filter((n) => n !== latest));
  }
  for (const n of stale) await Deno.remove(`${root}/${n}`, { recursive: true }).catch(() => {});
}

/**
 * Loads the checkpoint `latest` names in a run folder; a clear error when there is none. A LoRA checkpoint holds
 * no base: `base` loads it (the run's model), and the adapter is checked against it.
 */
export async function loadLatestCheckpoint(
  runDir: string,
  o: { base?: () => Promise<HostModel> } = {},
): Promise<LoadedCheckpoint> {
  let name: string;
  try {
    name = (await Deno.readTextFile(`${runDir}/checkpoints/latest`)).trim();
  } catch {
    throw new Deno.errors.NotFound(
      `${runDir} has no checkpoints/latest: it is not a run folder, or it stopped before its first checkpoint`,
    );
  }
  return await loadCheckpoint(`${runDir}/checkpoints/${name}`, o);
}

/** Loads one checkpoint folder: weights, tokenizer, trainer state, optimizer moments and critic. */
export async function loadCheckpoint(
  dir: string,
  o: { base?: () => Promise<HostModel> } = {},
): Promise<LoadedCheckpoint> {
  let loaded: Pick<LoadedCheckpoint, "config" | "dtype" | "tensors" | "tokenizer" | "adapter"> & { state: unknown };
  if (await isAdapterDir(dir)) {
    if (!o.base) throw new TypeError(`${dir} is a LoRA adapter without its base model; load it with the run's model`);
    const a = await loadAdapterDir(dir, { extra: [STATE_FILE] }), base = await o.base();
    loaded = { ...base, adapter: bindAdapter(base.config, a), state: a.extra[STATE_FILE] };
  } else {
    const m = await loadModelDir(dir, { extra: [STATE_FILE] });
    loaded = { ...m, state: m.extra[STATE_FILE] };
  }
  const state = loaded.state as TrainerState;
  if (state?.version !== 1) throw new SyntaxError(`${dir}/${STATE_FILE}: not a Crucible trainer state (version 1)`);
  const moments = await readMoments(`${dir}/${OPTIMIZER}`);
  let critic: LoadedCheckpoint["critic"];
  try {
    const w = await loadSafetensors(`${dir}/${CRITIC}`);
    critic = {
      tensors: new Map([...w].map(([k, t]) => [k, t.data])),
      moments: await readMoments(`${dir}/${CRITIC_OPTIMIZER}`),
    };
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return {
    critic,
    dir,
    config: loaded.config,
    dtype: loaded.dtype,
    tensors: loaded.tensors,
    tokenizer: loaded.tokenizer,
    state,
    moments,
    adapter: loaded.adapter,
  };
}

/** A checkpoint's model as a run uses it: weights, tokenizer and stop ids. */
export function hostFromCheckpoint(r: LoadedCheckpoint): HostModel {
  if (!r.tokenizer) throw new SyntaxError(`${r.dir} has no tokenizer.json`);
  return {
    config: r.config,
    dtype: r.dtype,
    tensors: r.tensors,
    tokenizer: r.tokenizer,
    stopIds: stopTokenIds({ config: r.config, tokenizer: r.tokenizer }),
    source: r.dir,
  };
}
