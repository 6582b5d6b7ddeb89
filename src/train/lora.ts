/**
 * LoRA in a run (model.lora_rank > 0, or model.adapter): which adapter the learner trains (a fresh one from the
 * config, a PEFT adapter directory, or a resumed checkpoint's), what a checkpoint holds of it (the adapter in PEFT's
 * format and its moments, never the base) and the merged Hugging Face directory model.save_merged asks for.
 */
import type { RunConfig } from "../config/schema.ts";
import type { ModelConfig } from "../model/config.ts";
import { ALL_LINEAR, initLora, loraCount, type LoraSettings, resolveTargets } from "../model/lora.ts";
import type { LoraModelOptions } from "../model/lora_model.ts";
import { saveModelDir } from "../model/model_dir.ts";
import { bindAdapter, loadAdapterDir, mergeAdapter } from "../model/peft.ts";
import { AGENT_FILE, agentSettings } from "./agent_settings.ts";
import type { Learner } from "../update/learner.ts";
import type { ResumedAdapter, Run } from "./types.ts";

/** verl's default lora_alpha. */
export const DEFAULT_LORA_ALPHA = 16;

/**
 * The adapter a run's learner starts with, or undefined for full fine-tuning: a resumed checkpoint's, else the
 * PEFT adapter model.adapter names (the LoRA keys, when given, must agree with it), else a fresh one of
 * model.lora_rank, lora_alpha and target_modules, seeded by trainer.seed. Refusals name the key and the limit.
 */
export async function runLora(
  c: RunConfig,
  config: ModelConfig,
  resumed?: ResumedAdapter,
): Promise<LoraModelOptions | undefined> {
  const m = c.model, base = { baseDtype: m.base_dtype };
  if (resumed) return { settings: resumed.settings, adapter: resumed.tensors, ...base };
  if (m.adapter) {
    const a = bindAdapter(config, await loadAdapterDir(m.adapter));
    agree(c, config, a.settings);
    return { settings: a.settings, adapter: a.tensors, ...base };
  }
  if (m.lora_rank === 0) return undefined;
  const settings = {
    rank: m.lora_rank,
    alpha: m.lora_alpha ?? DEFAULT_LORA_ALPHA,
    targets: resolveTargets(config, m.target_modules ?? ALL_LINEAR),
  };
  return { settings, adapter: initLora(config, settings, c.trainer.seed), ...base };
}

/** The LoRA keys given beside model.adapter must say what the adapter says. */
function agree(c: RunConfig, config: ModelConfig, s: LoraSettings): void {
  const m = c.model, file = `${m.adapter}/adapter_config.json`;
  const differ = (key: string, given: unknown, own: unknown) => {
    throw new RangeError(
      `model.${key} ${JSON.stringify(given)} differs from the adapter's ${JSON.stringify(own)} (${file}); ` +
        `leave model.${key} unset to train the adapter as it is`,
    );
  };
  if (m.lora_rank !== 0 && m.lora_rank !== s.rank) differ("lora_rank", m.lora_rank, s.rank);
  if (m.lora_alpha !== null && m.lora_alpha !== s.alpha) differ("lora_alpha", m.lora_alpha, s.alpha);
  if (m.target_modules !== null) {
    const given = resolveTargets(config, m.target_modules);
    if (given.join() !== s.targets.join()) differ("target_modules", given, s.targets);
  }
}

/** One line for the run log: the adapter, its trained parameters and the frozen base's storage. */
export function loraLine(l: Learner): string | undefined {
  const lora = l.model.lora;
  if (!lora) return undefined;
  const s = lora.settings, f16 = [...l.model.weights.tensors.values()].some((t) => t.dtype === "f16");
  return `LoRA rank ${s.rank}, alpha ${s.alpha} on ${s.targets.join(", ")}: ` +
    `${loraCount(l.model.config, s).toLocaleString("en-US")} trained parameters; the base is frozen` +
    (f16 ? " (its matrices in f16)" : "");
}

/** What a LoRA checkpoint saves of the learner: the adapter and the base's name (adapter_config.json). */
export function checkpointAdapter(c: RunConfig, l: Learner) {
  const lora = l.model.lora;
  return lora ? { lora, base: c.model.path ?? `crucible built-in ${c.model.tiny ?? "tiny"} model` } : undefined;
}

/**
 * With model.save_merged, writes `checkpoints/<name>-merged` beside the final checkpoints (final, sft-final): a
 * Hugging Face directory of the base with the adapter merged (W + s · B · A from the base as loaded, not its f16
 * copy), in the run's save dtype, with its tokenizer and agent settings. Does nothing otherwise.
 */
export async function saveMerged(run: Run, name: string): Promise<void> {
  const c = run.config, lora = run.learner.model.lora;
  if (!lora || !c.model.save_merged || (name !== "final" && name !== "sft-final")) return;
  const h = run.host;
  await saveModelDir(`${run.dir}/checkpoints/${name}-merged`, {
    config: h.config,
    tensors: mergeAdapter(h.config, h.tensors, lora.settings, await lora.tensors.toHost()),
    tokenizer: h.tokenizer,
    dtype: c.model.save_dtype === "auto" ? h.dtype : c.model.save_dtype,
    extra: { [AGENT_FILE]: agentSettings(c, run.env.task, run.env.options) },
  });
}
