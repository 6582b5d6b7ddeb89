/**
 * Fresh parameters from the parameter table: a seeded normal for matrices, ones for norms, zeros for biases (and for
 * a LoRA table: PEFT's uniform A, zero B).
 */
import { Rng } from "../util/random.ts";
import type { ModelConfig } from "./config.ts";
import { type ParamSpec, paramTable } from "./params.ts";

/**
 * Initial values of every parameter, keyed by Hugging Face name in table order. Each tensor draws from its own
 * generator seeded by `seed` and its name, so a tensor's values do not depend on which other tensors the
 * architecture has (adding q/k norms leaves q_proj unchanged). Costs one Box-Muller normal per matrix element.
 *
 * @example
 * ```ts
 * const params = initParams(config, 1234, { std: 0.02 });
 * ```
 */
export function initParams(
  config: ModelConfig,
  seed: number,
  opts: { std?: number; specs?: ParamSpec[] } = {},
): Map<string, Float32Array> {
  const std = opts.std ?? 0.02;
  if (!(std >= 0) || !Number.isFinite(std)) throw new RangeError(`Initialising: std ${std} must be finite and >= 0`);
  if (!Number.isInteger(seed)) throw new RangeError(`Initialising: seed ${seed} must be an integer`);
  const out = new Map<string, Float32Array>();
  for (const p of opts.specs ?? paramTable(config)) {
    const data = new Float32Array(p.shape.reduce((a, b) => a * b, 1));
    const rng = new Rng(hash32(`${seed}:${p.name}`));
    if (p.init === "ones") data.fill(1);
    else if (p.init === "normal") { for (let i = 0; i < data.length; i++) data[i] = std * rng.normal(); }
    else if (p.init === "kaiming") {
      const bound = 1 / Math.sqrt(p.shape[p.shape.length - 1]);
      for (let i = 0; i < data.length; i++) data[i] = rng.uniform(-bound, bound);
    }
    out.set(p.name, data);
  }
  return out;
}

/** FNV-1a over UTF-16 code units: a stable 32-bit seed from a string. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h | 0;
}
