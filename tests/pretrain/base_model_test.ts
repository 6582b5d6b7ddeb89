// The shipped base models: models/crucible-base, the main job's default model since 2026-11-28 (issue 27), and
// models/crucible-tiny, the one before it (the play page's, the OpenAI endpoint's and the examples' default). Each is a
// Hugging Face directory within the size the project allowed it, with a vocabulary that today's built-in tiny model's
// only adds to, its agent settings and the config that rebuilds it. Runs without a GPU.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { configSource } from "../../src/config/presets.ts";
import { loadModelDir, MODEL_FILES } from "../../src/model/model_dir.ts";
import { baseModelRole, evaluatedAt } from "../../src/pretrain/base_model.ts";
import { buildTinyModel } from "../../src/model/tiny.ts";
import { readAgentSettings } from "../../src/train/agent_settings.ts";
import { configuredTask } from "../../src/train/setup.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DIR = `${ROOT}models/crucible-tiny`;
const BASE = `${ROOT}models/crucible-base`;

async function dirBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const f of [...MODEL_FILES, "generation_config.json", "crucible.json", "pretrain.yaml", "README.md"]) {
    const st = await Deno.stat(`${dir}/${f}`);
    assert.ok(st.isFile, `${dir}/${f}`);
    bytes += st.size;
  }
  return bytes;
}

/** Today's built-in tiny tokenizer for a shipped config's task, and a tokenizer's words. */
async function builtTokenizer(config: string) {
  const { task } = await configuredTask(resolveConfig(await configSource(config)));
  const vocabulary = await task.vocabulary!(task.prompt);
  return buildTinyModel(vocabulary.corpus, undefined, vocabulary.phrases).tokenizer;
}
type Tokenizer = Awaited<ReturnType<typeof builtTokenizer>>;
const wordsOf = (t: Tokenizer) => Object.keys((t.files.tokenizer.model as { vocab: Record<string, number> }).vocab);

/** A shipped base's agent settings (task, reply layout) and its pretrain.yaml against a shipped config's. */
async function agentAndRecipe(dir: string, layout: string, config: string) {
  const agent = await readAgentSettings(dir);
  assert.equal(agent?.task, "textcraft");
  assert.equal(agent?.task_options.oracle_format, layout);
  const rebuild = resolveConfig({ text: await Deno.readTextFile(`${dir}/pretrain.yaml`), name: "pretrain.yaml" });
  const shipped = resolveConfig(await configSource(config));
  assert.deepEqual(rebuild.model, shipped.model);
  return { rebuild, shipped, card: await Deno.readTextFile(`${dir}/README.md`) };
}

Deno.test("the main job and its smoke run start from models/crucible-base, a Hugging Face directory of at most 20 MB; crucible-tiny stays within 10 MB", async () => {
  for (const name of ["textcraft", "textcraft_smoke"]) {
    assert.equal(resolveConfig(await configSource(name)).model.path, "models/crucible-base", name);
  }
  const base = await dirBytes(BASE), tiny = await dirBytes(DIR);
  assert.ok(base <= 20 * 1024 * 1024, `crucible-base: ${base} bytes`);
  assert.ok(tiny <= 10 * 1024 * 1024, `crucible-tiny: ${tiny} bytes`);
});

Deno.test("the main job plays with its base model's reply limits, so that what the base was pretrained to write fits", async () => {
  const main = resolveConfig(await configSource("textcraft"));
  const agent = (await readAgentSettings(BASE))!;
  assert.equal(main.rollout.max_tokens_per_turn, agent.max_tokens_per_turn);
  assert.equal(main.rollout.max_response_length, agent.max_response_length);
  assert.equal(main.rollout.max_prompt_length, agent.max_prompt_length);
});

Deno.test("crucible-base's words are exactly today's built-in tiny model's; its agent plays stack_tail replies; pretrain.yaml is textcraft_base's recipe", async () => {
  const loaded = await loadModelDir(BASE);
  const built = await builtTokenizer("textcraft_base");
  // The same words; the ids of the 40 count tokens it gained at step 5,800 come after the old ones
  // (`--extend-vocab`), where a fresh build sorts them among the rest.
  assert.deepEqual(wordsOf(loaded.tokenizer!).sort(), wordsOf(built).sort());
  assert.equal(loaded.config.vocabSize, built.vocabSize);
  for (const [name, t] of loaded.tensors) assert.ok(t.every(Number.isFinite), name);
  const { rebuild, shipped, card } = await agentAndRecipe(BASE, "stack_tail", "textcraft_base");
  assert.equal(rebuild.pretrain.seed, shipped.pretrain.seed);
  assert.deepEqual(rebuild.task_options, shipped.task_options);
  assert.match(card, /It is the base model of `deno task train textcraft`\./);
});

Deno.test("crucible-tiny's tokenizer is the built-in tiny model's of its day, which today's only adds to; every weight is finite", async () => {
  const loaded = await loadModelDir(DIR);
  const built = await builtTokenizer("textcraft_pretrain");
  assert.equal(loaded.config.vocabSize, loaded.tokenizer!.vocabSize);
  // Built at 2a9eebf; since, TextCraft's vocabulary gained the invalid-recipe refusal's words and every item id's
  // words (issue 27). Every word the model knows is still a word of today's vocabulary, and the new ones are those.
  const today = new Set(wordsOf(built)), shipped = new Set(wordsOf(loaded.tokenizer!));
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

Deno.test("crucible-tiny carries its agent settings and the pretraining config that rebuilds it", async () => {
  const { rebuild, shipped, card } = await agentAndRecipe(DIR, "stack", "textcraft_pretrain");
  assert.deepEqual(rebuild.pretrain, shipped.pretrain);
  assert.match(card, /synthetic crafting worlds/);
  assert.match(card, new RegExp(`seed ${shipped.pretrain.seed}`));
});

Deno.test("a base model's card says when its held-out numbers come from an evaluation before its checkpoint", () => {
  assert.equal(evaluatedAt(2000, 2000), "");
  assert.equal(evaluatedAt(undefined, 5), "");
  const line = evaluatedAt(2000, 2412);
  assert.match(line, /^\nFrom the evaluation at step 2000, the last at or before this checkpoint \(step 2412\)/);
  assert.ok(line.endsWith(".\n"), JSON.stringify(line));
});

Deno.test("deno task train bfcl's stages start from models/bfcl-base, which plays tiny calls within the job's reply limits; its card says so", async () => {
  const dir = `${ROOT}models/bfcl-base`;
  const { curriculumConfigs } = await import("../../src/train/curriculum.ts");
  const first = (await curriculumConfigs(await configSource("bfcl"), [])).stageConfig(0, undefined);
  assert.equal(first.model.path, "models/bfcl-base");
  const bytes = await dirBytes(dir);
  assert.ok(bytes <= 20 * 1024 * 1024, `bfcl-base: ${bytes} bytes`);
  const agent = (await readAgentSettings(dir))!;
  assert.equal(agent.task, "bfcl");
  assert.equal(agent.task_options.call_format, "tiny");
  assert.deepEqual(agent.task_options.generated_classes, first.task_options.generated_classes);
  assert.equal(first.rollout.max_tokens_per_turn, agent.max_tokens_per_turn);
  assert.equal(first.rollout.max_response_length, agent.max_response_length);
  const rebuild = resolveConfig({ text: await Deno.readTextFile(`${dir}/pretrain.yaml`), name: "pretrain.yaml" });
  const recipe = resolveConfig(await configSource("bfcl_pretrain"));
  assert.deepEqual(rebuild.model, recipe.model);
  assert.deepEqual(rebuild.task_options, recipe.task_options);
  assert.equal(rebuild.pretrain.seed, recipe.pretrain.seed);
  const loaded = await loadModelDir(dir);
  for (const [name, t] of loaded.tensors) assert.ok(t.every(Number.isFinite), name);
  assert.match(await Deno.readTextFile(`${dir}/README.md`), /It is the base model of `deno task train bfcl`\./);
});

Deno.test("a base model's card names the job whose shipped config starts from it, a curriculum's through its base", async () => {
  assert.equal(await baseModelRole("bfcl", "./models/bfcl-base/"), "It is the base model of `deno task train bfcl`.");
  assert.equal(
    await baseModelRole("textcraft", "models/crucible-base"),
    "It is the base model of `deno task train textcraft`.",
  );
  assert.match(
    await baseModelRole("bfcl", "runs/x/model"),
    /^A base model for `deno task train bfcl model\.path=runs\/x\/model`/,
  );
  assert.match(await baseModelRole("sqlgym", "runs/y"), /the shipped config does not start from it/);
});
