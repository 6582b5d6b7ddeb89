/**
 * What the model golden tests share: the tiny random architectures, their packed sequences, random parameters,
 * the SFT loss gradient and the tolerances of a 2-layer f32 model against the float64 reference.
 */
import type { Gpu } from "../../src/gpu/device.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import type { ModelConfig } from "../../src/model/config.ts";
import type { HeadGrad } from "../../src/model/head.ts";
import { paramTable } from "../../src/model/params.ts";
import { Rng } from "../../src/util/random.ts";
import type { RefParams } from "../reference/model.ts";

/** The shape every golden architecture shares. */
export const BASE = {
  vocab_size: 29,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  rope_theta: 10000,
  rms_norm_eps: 1e-6,
};

/** One tiny model per architecture family: a name and its config.json overrides of BASE. */
export const ARCHS: [string, Record<string, unknown>][] = [
  ["qwen2 with q/k/v bias, untied head", { model_type: "qwen2", tie_word_embeddings: false }],
  ["qwen2 with tied embeddings", { model_type: "qwen2", tie_word_embeddings: true }],
  ["qwen3 with q/k norms and explicit head_dim", { model_type: "qwen3", head_dim: 6, tie_word_embeddings: true }],
  ["llama without biases", { model_type: "llama", num_key_value_heads: 4, tie_word_embeddings: false }],
];

/** Sequences of unequal length, one of length 1 (nothing to score). */
export const SEQS = [[3, 17, 5, 28, 9, 1], [4, 4, 22, 0], [11]];

/** f32 forward of a 2-layer model: logits carry a few 1e-6 relative error. */
export const LOGITS = { atol: 2e-5, rtol: 1e-4 };
/** Gradients sum over tokens. */
export const GRAD = { atol: 2e-5, rtol: 1e-3 };

/** Every parameter random (norm weights and biases too, so that their gradients see non-trivial values). */
export function randomParams(c: ModelConfig, seed: number): RefParams {
  const rng = new Rng(seed);
  const out: RefParams = new Map();
  for (const s of paramTable(c)) {
    const n = s.shape.reduce((a, b) => a * b, 1);
    const base = s.init === "ones" ? 1 : 0;
    out.set(s.name, Float64Array.from({ length: n }, () => Math.fround(base + 0.4 * rng.normal())));
  }
  return out;
}

/** The parameters as the GPU takes them. */
export function toF32(p: RefParams): Map<string, Float32Array> {
  return new Map([...p].map(([k, v]) => [k, Float32Array.from(v)]));
}

/** The SFT loss gradient per token: -mask / count, uploaded once. */
export function sftGrad(gpu: Gpu, mask: number[]): HeadGrad {
  const count = mask.reduce((a, b) => a + b, 0);
  const dlogp = fromHost(gpu, mask.map((m) => -m / count), [mask.length]);
  const dentropy = zeros(gpu, [mask.length]);
  return (_b, chunk) => ({
    dlogp: chunk.count === mask.length ? dlogp : dlogp.view(chunk.start, [chunk.count]),
    dentropy: chunk.count === mask.length ? dentropy : dentropy.view(chunk.start, [chunk.count]),
  });
}
