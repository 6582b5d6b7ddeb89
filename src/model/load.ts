/**
 * A model ready to compute: a Hugging Face directory loaded, its parameters on the GPU, its tokenizer and stop ids,
 * and optionally a PEFT LoRA adapter on top (the base then frozen as in training: f16 where the GPU allows).
 */
import type { Gpu } from "../gpu/device.ts";
import { loraTransformer } from "./lora_model.ts";
import { loadModelDir } from "./model_dir.ts";
import { bindAdapter, loadAdapterDir } from "./peft.ts";
import type { ModelConfig } from "./config.ts";
import type { Tokenizer } from "./tokenizer.ts";
import { stopTokenIds } from "./model_dir.ts";
import { Transformer } from "./transformer.ts";

/** A loaded model bound to the GPU. */
export interface GpuModel {
  /** The checked model configuration. */
  config: ModelConfig;
  /** The model on the GPU. */
  model: Transformer;
  /** The directory's tokenizer, when it has tokenizer.json. */
  tokenizer?: Tokenizer;
  /** Ids that end a generation (eos of the configs and tokenizer). */
  stopIds: number[];
}

/**
 * Loads a model directory onto the GPU, with a PEFT adapter directory on it when `adapter` names one. Errors name
 * the directory and the file at fault (an adapter of another base: the tensor and both shapes).
 */
export async function loadGpuModel(
  gpu: Gpu,
  dir: string,
  opts: { recompute?: boolean; adapter?: string } = {},
): Promise<GpuModel> {
  const loaded = await loadModelDir(dir);
  const lora = opts.adapter ? bindAdapter(loaded.config, await loadAdapterDir(opts.adapter)) : undefined;
  const recompute = opts.recompute;
  return {
    config: loaded.config,
    model: lora
      ? loraTransformer(gpu, loaded.config, loaded.tensors, {
        settings: lora.settings,
        adapter: lora.tensors,
        baseDtype: "auto",
        recompute,
      })
      : Transformer.fromHost(gpu, loaded.config, loaded.tensors, { recompute }),
    tokenizer: loaded.tokenizer,
    stopIds: stopTokenIds(loaded),
  };
}
