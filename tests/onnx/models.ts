// The models the ONNX tests export: the built-in tiny model and small random models of each architecture, with
// norm weights and biases random too (so q/k/v bias, q/k norms and an untied head all change the logits).
import { type ModelConfig, parseModelConfig } from "../../src/model/config.ts";
import { saveModelDir } from "../../src/model/model_dir.ts";
import { paramTable } from "../../src/model/params.ts";
import { buildTinyModel } from "../../src/model/tiny.ts";
import type { Tokenizer } from "../../src/model/tokenizer.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { Rng } from "../../src/util/random.ts";

/** A model to export. */
export interface TestModel {
  name: string;
  config: ModelConfig;
  tensors: Map<string, Float32Array>;
  tokenizer: Tokenizer;
}

const CORPUS = [
  "Crafting commands: craft 4 oak planks using 1 oak log",
  "get 1 oak log",
  "Goal: craft oak planks. Inventory: [oak planks] (4) Got Crafted",
];

const SHAPES: [string, Record<string, unknown>][] = [
  ["qwen2.5-shaped with q/k/v bias and an untied head", {
    model_type: "qwen2",
    tie_word_embeddings: false,
    num_attention_heads: 4,
    num_key_value_heads: 2,
  }],
  ["qwen3 with q/k norms and head_dim 12", {
    model_type: "qwen3",
    head_dim: 12,
    tie_word_embeddings: true,
    num_attention_heads: 4,
    num_key_value_heads: 1,
  }],
  ["llama with an untied head", {
    model_type: "llama",
    tie_word_embeddings: false,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 500000,
  }],
];

/** Every tensor drawn from a normal with `std` around its init (ones for norms), seeded. */
function randomTensors(c: ModelConfig, seed: number, std: number): Map<string, Float32Array> {
  const rng = new Rng(seed);
  return new Map(
    paramTable(c).map((s) => {
      const n = s.shape.reduce((a, b) => a * b, 1), base = s.init === "ones" ? 1 : 0;
      return [s.name, Float32Array.from({ length: n }, () => base + std * rng.normal())];
    }),
  );
}

/** The tiny model (configs/models/tiny.yaml, vocabulary from a small corpus) and the three architectures. */
export function testModels(): TestModel[] {
  const tiny = buildTinyModel(CORPUS);
  const tokenizer = wordTokenizer(CORPUS);
  const out: TestModel[] = [{ name: "the built-in tiny model", ...tiny }];
  for (const [i, [name, shape]] of SHAPES.entries()) {
    const config = parseModelConfig({
      vocab_size: tokenizer.vocabSize,
      hidden_size: 32,
      intermediate_size: 40,
      num_hidden_layers: 2,
      max_position_embeddings: 256,
      eos_token_id: tokenizer.id("<|im_end|>"),
      ...shape,
    });
    out.push({ name, config, tensors: randomTensors(config, 11 + i, 0.3), tokenizer });
  }
  return out;
}

/** Saves a test model as a model directory under a fresh temporary folder; returns its path. */
export async function saveTestModel(m: TestModel): Promise<string> {
  const dir = `${await Deno.makeTempDir()}/model`;
  await saveModelDir(dir, { config: m.config, tensors: m.tensors, tokenizer: m.tokenizer });
  return dir;
}
