// models/webshop-base, the start of `deno task train webshop`: within 20 MB, its agent settings the job's (task,
// reply layout, reply and response limits), its rebuild recipe the shipped webshop_pretrain, finite weights, a
// tokenizer that reads the shipped catalogue's pages without an unknown word, and a card that names the job.
import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/load.ts";
import { configSource } from "../../../src/config/presets.ts";
import { loadModelDir } from "../../../src/model/model_dir.ts";
import { UNK } from "../../../src/model/word_tokenizer.ts";
import { readAgentSettings } from "../../../src/train/agent_settings.ts";
import { generatedSource } from "../../../tasks/webshop/data.ts";
import { oracleEpisode } from "../../../tasks/webshop/oracle.ts";

const DIR = new URL("../../../models/webshop-base", import.meta.url).pathname;

Deno.test("deno task train webshop starts from models/webshop-base, which fits the job and reads its pages", async () => {
  const job = resolveConfig(await configSource("webshop"));
  assert.equal(job.model.path, "models/webshop-base");
  let bytes = 0;
  for await (const e of Deno.readDir(DIR)) bytes += (await Deno.stat(`${DIR}/${e.name}`)).size;
  assert.ok(bytes <= 20 * 1024 * 1024, `webshop-base: ${bytes} bytes`);
  const agent = (await readAgentSettings(DIR))!;
  assert.equal(agent.task, "webshop");
  assert.equal(agent.task_options.reply_format, job.task_options.reply_format);
  assert.equal(agent.max_tokens_per_turn, job.rollout.max_tokens_per_turn);
  assert.equal(agent.max_response_length, job.rollout.max_response_length);
  const rebuild = resolveConfig({ text: await Deno.readTextFile(`${DIR}/pretrain.yaml`), name: "pretrain.yaml" });
  const recipe = resolveConfig(await configSource("webshop_pretrain"));
  assert.deepEqual(rebuild.model, recipe.model);
  assert.deepEqual(rebuild.task_options, recipe.task_options);
  assert.deepEqual(rebuild.data.prompt, recipe.data.prompt);
  assert.equal(rebuild.pretrain.seed, recipe.pretrain.seed);
  const loaded = await loadModelDir(DIR);
  for (const [name, t] of loaded.tensors) assert.ok(t.every(Number.isFinite), name);
  const unk = loaded.tokenizer!.id(UNK);
  const { world, tasks } = generatedSource();
  for (const i of tasks.splits!.test.slice(0, 10)) {
    const e = oracleEpisode(world, i, { format: "action" });
    for (const text of [e.opening, ...e.replies, ...e.observations]) {
      assert.ok(!loaded.tokenizer!.encode(text).includes(unk), text.slice(0, 120));
    }
  }
  assert.match(await Deno.readTextFile(`${DIR}/README.md`), /It is the base model of `deno task train webshop`\./);
});

Deno.test("models/webshop-base3, the 3-layer base on the page-only oracle, fits 20 MB and reads the page-only demos", async () => {
  const dir = new URL("../../../models/webshop-base3", import.meta.url).pathname;
  let bytes = 0;
  for await (const e of Deno.readDir(dir)) bytes += (await Deno.stat(`${dir}/${e.name}`)).size;
  assert.ok(bytes <= 20 * 1024 * 1024, `webshop-base3: ${bytes} bytes`);
  const config = JSON.parse(await Deno.readTextFile(`${dir}/config.json`));
  assert.equal(config.num_hidden_layers, 3);
  const rebuild = resolveConfig({ text: await Deno.readTextFile(`${dir}/pretrain.yaml`), name: "pretrain.yaml" });
  assert.equal(rebuild.task, "webshop");
  assert.equal(rebuild.task_options.oracle_pick, "top");
  assert.equal(rebuild.task_options.oracle_search, "instruction");
  const loaded = await loadModelDir(dir);
  assert.equal(loaded.config.numLayers, 3);
  for (const [name, t] of loaded.tensors) assert.ok(t.every(Number.isFinite), name);
  const unk = loaded.tokenizer!.id(UNK);
  const { world, tasks } = generatedSource();
  for (const i of tasks.splits!.test.slice(0, 10)) {
    const e = oracleEpisode(world, i, { format: "action", pick: "top", search: "instruction" });
    for (const text of [e.opening, ...e.replies, ...e.observations]) {
      assert.ok(!loaded.tokenizer!.encode(text).includes(unk), text.slice(0, 120));
    }
  }
  assert.match(
    await Deno.readTextFile(`${dir}/README.md`),
    /Held-out results[\s\S]*copied right \(teacher-forced\): 77\.5%/,
  );
});
