// The shipped base model (models/crucible-tiny): the main job's default model, a Hugging Face directory within the
// size the project allows, with the built-in tiny model's vocabulary of its day, its agent settings and the config
// that rebuilt it then. Runs without a GPU.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { configSource } from "../../src/config/presets.ts";
import { loadModelDir, MODEL_FILES } from "../../src/model/model_dir.ts";
import { buildTinyModel } from "../../src/model/tiny.ts";
import { readAgentSettings } from "../../src/train/agent_settings.ts";
import { configuredTask } from "../../src/train/setup.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DIR = `${ROOT}models/crucible-tiny`;
const MAX_BYTES = 10 * 1024 * 1024;

Deno.test("the main job starts from the shipped base model, which is a Hugging Face directory of at most 10 MB", async () => {
  const main = resolveConfig(await configSource("textcraft"));
  assert.equal(main.model.path, "models/crucible-tiny");
  let bytes = 0;
  for (const f of [...MODEL_FILES, "generation_config.json", "crucible.json", "pretrain.yaml", "README.md"]) {
    const st = await Deno.stat(`${DIR}/${f}`);
    assert.ok(st.isFile, f);
    bytes += st.size;
  }
  assert.ok(bytes <= MAX_BYTES, `${bytes} bytes`);
});

Deno.test("the base model's tokenizer is the built-in tiny model's of its day, which today's only adds to; every weight is finite", async () => {
  const loaded = await loadModelDir(DIR);
  const { task } = await configuredTask(resolveConfig(await configSource("textcraft_pretrain")));
  const vocabulary = await task.vocabulary!(task.prompt);
  const built = buildTinyModel(vocabulary.corpus, undefined, vocabulary.phrases).tokenizer;
  assert.equal(loaded.config.vocabSize, loaded.tokenizer!.vocabSize);
  // Built at 2a9eebf; since, TextCraft's vocabulary gained the invalid-recipe refusal's words and every item id's
  // words (issue 27). Every word the model knows is still a word of today's vocabulary, and the new ones are those.
  const words = (t: typeof built) => Object.keys((t.files.tokenizer.model as { vocab: Record<string, number> }).vocab);
  const today = new Set(words(built)), shipped = new Set(words(loaded.tokenizer!));
  assert.deepEqual([...shipped].filter((w) => !today.has(w)), []);
  const added = [...today].filter((w) => !shipped.has(w));
  assert.equal(added.length, built.vocabSize - loaded.config.vocabSize);
  for (const w of ["ItemTagWithCount", " valid", "ItemTag", "tag"]) assert.ok(added.includes(w), `${w} is new`);
  const text = "Crafting commands:\ncraft 4 dark oak planks using 1 dark oak log\n\nGoal: craft dark oak planks.";
  assert.equal(loaded.tokenizer!.decode(loaded.tokenizer!.encode(text)), text);
  assert.equal(
    built.decode(loaded.tokenizer!.encode(text).map((id) => built.id(loaded.tokenizer!.decode([id])))),
    text,
  );
  for (const [name, t] of loaded.tensors) assert.ok(t.every(Number.isFinite), name);
});

Deno.test("the base model carries its agent settings and the pretraining config that rebuilds it", async () => {
  const agent = await readAgentSettings(DIR);
  assert.equal(agent?.task, "textcraft");
  assert.equal(agent?.task_options.oracle_format, "stack");
  const rebuild = resolveConfig({ text: await Deno.readTextFile(`${DIR}/pretrain.yaml`), name: "pretrain.yaml" });
  const shipped = resolveConfig(await configSource("textcraft_pretrain"));
  assert.deepEqual(rebuild.pretrain, shipped.pretrain);
  assert.deepEqual(rebuild.model, shipped.model);
  const card = await Deno.readTextFile(`${DIR}/README.md`);
  assert.match(card, /synthetic crafting worlds/);
  assert.match(card, new RegExp(`seed ${shipped.pretrain.seed}`));
});
