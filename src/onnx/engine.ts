/**
 * A model directory opened on the onnx engine: exported in memory (no files written) and run by onnxruntime-web,
 * with what the rollout loop needs beside the sampler (tokenizer, stop ids, config).
 */
import type { ModelConfig } from "../model/config.ts";
import { stopTokenIds } from "../model/model_dir.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { loadForExport, onnxBytes } from "./export.ts";
import { createSession, loadOrt, type OrtBackend } from "./runtime.ts";
import { OnnxSampler } from "./sampler.ts";

/** An opened model on the onnx engine. */
export interface OnnxEngine {
  config: ModelConfig;
  sampler: OnnxSampler;
  tokenizer?: Tokenizer;
  stopIds: number[];
  /** Frees the session. */
  release(): Promise<void>;
}

/**
 * Opens a model directory on onnxruntime-web's `backend`.
 *
 * @example
 * ```ts
 * const engine = await openOnnxEngine("models/crucible-tiny", { backend: "wasm", slots: 4, maxLen: 2048 });
 * ```
 */
export async function openOnnxEngine(
  dir: string,
  o: { backend: OrtBackend; slots: number; maxLen: number },
): Promise<OnnxEngine> {
  const model = await loadForExport(dir);
  const session = await createSession(await onnxBytes(model, "f32"), o.backend);
  const sampler = new OnnxSampler(await loadOrt(o.backend), session, model.config, o);
  return {
    config: model.config,
    sampler,
    tokenizer: model.tokenizer,
    stopIds: stopTokenIds(model),
    release: () => session.release(),
  };
}
