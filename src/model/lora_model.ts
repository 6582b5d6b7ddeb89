/**
 * A LoRA model: a Transformer whose base weights are frozen, with an adapter (lora.ts) on its projections. Apart from
 * lora.ts, so that the adapter's module needs nothing of the decoder's, whose layers read the adapter.
 */
import type { Gpu } from "../gpu/device.ts";
import type { ModelConfig } from "./config.ts";
import { frozenDtype, LoraAdapters, type LoraSettings } from "./lora.ts";
import { Transformer } from "./transformer.ts";
import { TensorSet } from "./weights.ts";

/** How a LoRA model is built: the adapter, its starting values and the frozen base's storage. */
export interface LoraModelOptions {
  /** The adapter's rank, alpha and targets. */
  settings: LoraSettings;
  /** Every tensor of loraTable(config, settings): initLora's, or an adapter's as loaded. */
  adapter: ReadonlyMap<string, Float32Array>;
  /** The base's storage: auto = f16 where the GPU has shader-f16 (the matmul and embedding kernels read it), else f32. */
  baseDtype: "auto" | "f16" | "f32";
  /** Re-run each layer's forward in the backward instead of keeping its activations. */
  recompute?: boolean;
}

/**
 * A model whose base weights are frozen (matrices in f16 when asked and possible, see frozenDtype) with a LoRA
 * adapter on its projections. Train it with a gradient set over the adapter's table.
 *
 * @example
 * ```ts
 * const settings = { rank: 8, alpha: 16, targets: resolveTargets(config, "all-linear") };
 * const model = loraTransformer(gpu, config, base, { settings, adapter: initLora(config, settings, 1), baseDtype: "auto" });
 * ```
 */
export function loraTransformer(
  gpu: Gpu,
  config: ModelConfig,
  base: ReadonlyMap<string, Float32Array>,
  o: LoraModelOptions,
): Transformer {
  if (o.baseDtype === "f16" && !gpu.features.f16) {
    throw new TypeError("model.base_dtype f16 needs the shader-f16 feature, which this GPU lacks; use auto or f32");
  }
  const dtype = o.baseDtype !== "f32" && gpu.features.f16 ? "f16" : "f32";
  const lora = new LoraAdapters(gpu, config, o.settings, o.adapter);
  const weights = TensorSet.fromHost(gpu, config, base, { dtype: (spec, data) => frozenDtype(spec, data, dtype) });
  return new Transformer(gpu, config, weights, { recompute: o.recompute, lora });
}
