/**
 * A model ready to compute: a Hugging Face directory loaded, its parameters on the GPU, its tokenizer and stop ids.
 */
import type { Gpu } from "../gpu/device.ts";
import { loadModelDir } from "./model_dir.ts";
import type { ModelConfig } from "./config.ts";
import type { Tokenizer } from "./tokenizer.ts";
import { stopTokenIds } from "./model_dir.ts";
import { Transformer } from "./transformer.ts";

/** A loaded model bound to the GPU. */
export interface GpuModel {
  config: ModelConfig;
  model: Transformer;
  tokenizer?: Tokenizer;
  /** Ids that end a generation (eos of the configs and tokenizer). */
  stopIds: number[];
}

/** Loads a model directory onto the GPU. Errors name the directory and the file at fault. */
export async function loadGpuModel(gpu: Gpu, dir: string, opts: { recompute?: boolean } = {}): Promise<GpuModel> {
  const loaded = await loadModelDir(dir);
  return {
    config: loaded.config,
    model: Transformer.fromHost(gpu, loaded.config, loaded.tensors, opts),
    tokenizer: loaded.tokenizer,
    stopIds: stopTokenIds(loaded),
  };
}
