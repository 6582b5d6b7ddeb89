/**
 * Growing a trained model by one decoder layer that changes nothing: the new layer's two output projections (o_proj,
 * down_proj) are zero, so it adds exactly 0 to the residual stream and the grown model's logits are the old one's.
 * Its other matrices are a fresh seeded normal (norms one, biases zero), so training moves it at once: the loss's
 * gradient reaches o_proj and down_proj through their inputs, and the rest of the layer through them after the
 * first step. (Zero everywhere would stay zero: no gradient reaches a layer whose inputs and outputs are both 0.)
 * It is how a pretraining that stalls on a circuit its depth makes hard goes on with one more layer instead of
 * starting over (docs/notes/2026-11-base-model-runs.md).
 */
import type { ModelConfig } from "./config.ts";
import { initParams } from "./init.ts";
import { layerNames, paramTable } from "./params.ts";

/** Where the new layer goes and how its fresh matrices are drawn. */
export interface GrowOptions {
  /** Its index in the grown model: 0 before every layer, numLayers after the last. */
  at: number;
  seed: number;
  /** The fresh matrices' standard deviation (the shape's init_std). */
  std: number;
}

/**
 * The model with one more layer at `o.at`: layers from `at` on move up by one. Every old tensor is kept as it is
 * (the returned map shares their arrays); names follow the grown config's parameter table.
 *
 * @example
 * ```ts
 * const grown = insertLayer(config, tensors, { at: 1, seed: 1234, std: 0.02 });
 * ```
 */
export function insertLayer(
  config: ModelConfig,
  tensors: ReadonlyMap<string, Float32Array>,
  o: GrowOptions,
): { config: ModelConfig; tensors: Map<string, Float32Array> } {
  const L = config.numLayers;
  if (!Number.isInteger(o.at) || o.at < 0 || o.at > L) {
    throw new RangeError(`A new layer's place ${o.at} must be an integer from 0 (first) to ${L} (after the last)`);
  }
  const grown: ModelConfig = { ...config, numLayers: L + 1 };
  const specs = paramTable(grown);
  const fresh = new Set(Object.values(layerNames(o.at)));
  const silent = new Set([layerNames(o.at).o, layerNames(o.at).down]);
  const drawn = initParams(grown, o.seed, { std: o.std, specs: specs.filter((p) => fresh.has(p.name)) });
  const out = new Map<string, Float32Array>(), used = new Set<string>();
  for (const p of specs) {
    if (fresh.has(p.name)) {
      const t = drawn.get(p.name)!;
      out.set(p.name, silent.has(p.name) ? t.fill(0) : t);
      continue;
    }
    const from = oldName(p.name, o.at);
    const t = tensors.get(from);
    if (!t) throw new RangeError(`Growing a model: it has no ${from}, which its config says it has`);
    const n = p.shape.reduce((a, b) => a * b, 1);
    if (t.length !== n) throw new RangeError(`Growing a model: ${from} has ${t.length} values, its shape ${n}`);
    out.set(p.name, t);
    used.add(from);
  }
  const left = [...tensors.keys()].filter((k) => !used.has(k));
  if (left.length > 0) throw new RangeError(`Growing a model: ${left.join(", ")} not in its config's parameter table`);
  return { config: grown, tensors: out };
}

/** The old model's name of a grown model's tensor that is not the new layer's. */
function oldName(name: string, at: number): string {
  return name.replace(/^model\.layers\.(\d+)\./, (_, l) => `model.layers.${Number(l) > at ? Number(l) - 1 : l}.`);
}
