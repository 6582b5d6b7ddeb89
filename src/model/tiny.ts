/**
 * The built-in tiny model: a Qwen2 architecture from configs/models/tiny.yaml, a word-level tokenizer built from a
 * corpus, and parameters drawn from a seed. It goes through the same code as any Hugging Face model.
 */
import { parse } from "yaml";
import { z } from "zod";
import tinyYaml from "../../configs/models/tiny.yaml" with { type: "text" };
import crucibleTinyYaml from "../../configs/models/crucible_tiny.yaml" with { type: "text" };
import crucibleBaseYaml from "../../configs/models/crucible_base.yaml" with { type: "text" };
import crucibleBase3Yaml from "../../configs/models/crucible_base_3.yaml" with { type: "text" };
import crucibleTiny3Yaml from "../../configs/models/crucible_tiny_3.yaml" with { type: "text" };
import { type ModelConfig, parseModelConfig } from "./config.ts";
import { initParams } from "./init.ts";
import type { Tokenizer } from "./tokenizer.ts";
import { wordTokenizer } from "./word_tokenizer.ts";

/** @ignore */
const TinySpec = z.object({
  hidden_size: z.number().int().positive(),
  intermediate_size: z.number().int().positive(),
  num_hidden_layers: z.number().int().positive(),
  num_attention_heads: z.number().int().positive(),
  num_key_value_heads: z.number().int().positive(),
  rope_theta: z.number().positive(),
  rms_norm_eps: z.number().positive(),
  tie_word_embeddings: z.boolean(),
  max_position_embeddings: z.number().int().positive(),
  init_std: z.number().nonnegative(),
  seed: z.number().int(),
}).strict();

/**
 * The tiny model's settings (configs/models/tiny.yaml, or another YAML of the same shape).
 *
 * @ignore
 */
export type TinySpec = z.infer<typeof TinySpec>;

/** Shapes shipped in configs/models/, by name: `model.tiny` may name one instead of giving a path. */
export const TINY_SHAPES: Readonly<Record<string, string>> = {
  tiny: tinyYaml,
  crucible_tiny: crucibleTinyYaml,
  crucible_base: crucibleBaseYaml,
  crucible_base_3: crucibleBase3Yaml,
  crucible_tiny_3: crucibleTiny3Yaml,
};

/** The spec `model.tiny` names: a shipped shape's name, a YAML file's path, or null for configs/models/tiny.yaml. */
export async function tinySpecOf(nameOrPath: string | null): Promise<TinySpec> {
  if (nameOrPath === null) return parseTinySpec();
  if (Object.hasOwn(TINY_SHAPES, nameOrPath)) {
    return parseTinySpec(TINY_SHAPES[nameOrPath], `configs/models/${nameOrPath}.yaml`);
  }
  return parseTinySpec(await Deno.readTextFile(nameOrPath), nameOrPath);
}

/** Parses a tiny-model YAML, naming the bad key. */
export function parseTinySpec(text: string = tinyYaml, source = "configs/models/tiny.yaml"): TinySpec {
  const r = TinySpec.safeParse(parse(text));
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new TypeError(`${source}: "${issue.path.join(".") || "(root)"}" ${issue.message.toLowerCase()}`);
  }
  return r.data;
}

/** A freshly initialised tiny model. */
export interface TinyModel {
  /** The tiny model's configuration. */
  config: ModelConfig;
  /** Every parameter by Hugging Face name, freshly initialised. */
  tensors: Map<string, Float32Array>;
  /** A word-level tokenizer over the model's vocabulary. */
  tokenizer: Tokenizer;
}

/**
 * Builds the tokenizer from `corpus` (with `phrases` kept whole, see WordTokenizerOptions) and a model sized to its
 * vocabulary, initialised from the spec's seed.
 */
export function buildTinyModel(
  corpus: Iterable<string>,
  spec: TinySpec = parseTinySpec(),
  phrases: readonly string[] = [],
): TinyModel {
  const tokenizer = wordTokenizer(corpus, { phrases });
  const { init_std, seed, ...hf } = spec;
  const config = parseModelConfig({
    ...hf,
    model_type: "qwen2",
    vocab_size: tokenizer.vocabSize,
    eos_token_id: tokenizer.id("<|im_end|>"),
  }, "tiny model");
  return { config, tensors: initParams(config, seed, { std: init_std }), tokenizer };
}
