import assert from "node:assert/strict";
import { paramCount } from "../../src/model/params.ts";
import { buildTinyModel, parseTinySpec } from "../../src/model/tiny.ts";

const CORPUS = [
  "Crafting commands:\ncraft 4 oak planks using 1 oak log",
  "Inventory: [oak planks] (4)",
  "Got 1 oak log",
];

Deno.test("the tiny model is a Qwen2 config sized to its word vocabulary and initialised from its seed", () => {
  const spec = parseTinySpec();
  const a = buildTinyModel(CORPUS, spec);
  const b = buildTinyModel(CORPUS, spec);
  assert.equal(a.config.architecture, "qwen2");
  assert.equal(a.config.vocabSize, a.tokenizer.vocabSize);
  assert.equal(a.config.hiddenSize, spec.hidden_size);
  assert.deepEqual(a.config.eosTokenIds, [a.tokenizer.id("<|im_end|>")]);
  assert.ok(paramCount(a.config) < 2_000_000, "tiny must stay tiny");
  for (const [name, t] of a.tensors) assert.deepEqual(t, b.tensors.get(name), name);
  const other = buildTinyModel(CORPUS, { ...spec, seed: spec.seed + 1 });
  assert.notDeepEqual(other.tensors.get("model.embed_tokens.weight"), a.tensors.get("model.embed_tokens.weight"));
  const e = a.tensors.get("model.embed_tokens.weight")!;
  const std = Math.sqrt(e.reduce((s, x) => s + x * x, 0) / e.length);
  assert.ok(Math.abs(std - spec.init_std) < 0.2 * spec.init_std, `std ${std}`);
});

Deno.test("a tiny-model YAML with an unknown key or a wrong type is refused by key", () => {
  assert.throws(() => parseTinySpec("hidden_size: 8\nbogus: 1\n", "x.yaml"), /x\.yaml/);
  const base = Deno.readTextFileSync(new URL("../../configs/models/tiny.yaml", import.meta.url));
  assert.throws(() => parseTinySpec(base.replace(/hidden_size: \d+/, "hidden_size: wide"), "y.yaml"), /"hidden_size"/);
});
