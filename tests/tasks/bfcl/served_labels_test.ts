// Evaluation and training against a separate BFCL server (`--env-url`): a server started in process over a data
// directory whose entries' categories and classes are not the generated tasks' at the same indices. The results are
// grouped by the labels the server reported at each reset (not by the generated set's), the split comes from the
// server (its `bfcl` split is its 3 entries, not 800), and a built-in split past the entries it holds is refused.
// Signal sampling groups and counts its prompts by the categories the server publishes and reports, and the run's
// report names each episode by the entry's id and category.
import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/load.ts";
import { wordTokenizer } from "../../../src/model/word_tokenizer.ts";
import { ScriptedSampler } from "../../../src/rollout/scripted.ts";
import { evaluate } from "../../../src/train/eval.ts";
import { checkEnv, openEnv, servedCategory, splitIndices } from "../../../src/train/setup.ts";
import { readRun } from "../../../src/report/data.ts";
import { byCategory, type DataPosition, recordSignal } from "../../../src/rl/prompts.ts";
import { appendEpisodes } from "../../../src/train/metrics.ts";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { DOC_FILES } from "../../../tasks/bfcl/classes/docs.ts";
import { generateEntries } from "../../../tasks/bfcl/generator.ts";
import { serveBfcl } from "../../../tasks/bfcl/server.ts";
import { GENERATED_DOCS } from "../../../tasks/bfcl/tool_docs.ts";
import { envClient, TASKS } from "../../../tasks/mod.ts";
import { get as getJson, playScripts, post as postJson } from "../../env/helpers.ts";
import { groupRewards } from "../../../src/train/step_metrics.ts";

const bfcl = TASKS.bfcl;

/** BFCL's layout with one miss_func entry and two long_context ones over the given classes, served 0, 1, 2. */
async function dataDir(classes: string[]): Promise<{ dir: string; want: { category: string; classes: string[] }[] }> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/possible_answer`);
  await Deno.mkdir(`${dir}/multi_turn_func_doc`);
  const made = generateEntries({ seed: 3, count: 3, split: "train", classes, categories: ["base"] }, newInstance);
  const files = { miss_func: [made[0]], long_context: [made[1], made[2]] };
  const want = [];
  for (const [category, entries] of Object.entries(files)) {
    const q = entries.map((e, i) => ({
      id: `multi_turn_${category}_${i}`,
      question: e.question,
      initial_config: e.initialConfig,
      involved_classes: e.involvedClasses,
    }));
    const a = entries.map((e, i) => ({ id: `multi_turn_${category}_${i}`, ground_truth: e.groundTruth }));
    const lines = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).join("\n") + "\n";
    await Deno.writeTextFile(`${dir}/BFCL_v4_multi_turn_${category}.json`, lines(q));
    await Deno.writeTextFile(`${dir}/possible_answer/BFCL_v4_multi_turn_${category}.json`, lines(a));
    want.push(...entries.map((e) => ({ category, classes: e.involvedClasses })));
  }
  for (const [cls, docs] of Object.entries(GENERATED_DOCS)) {
    await Deno.writeTextFile(
      `${dir}/multi_turn_func_doc/${DOC_FILES[cls]}`,
      docs.map((d) => JSON.stringify(d)).join("\n"),
    );
  }
  return { dir, want };
}

Deno.test("evaluation over a separate server groups by the categories and classes the server reports", async () => {
  const { dir, want } = await dataDir(["MathAPI", "VehicleControlAPI"]);
  // The generated set's labels at indices 0-2 (what the task hook alone answers) are not the served ones.
  const categories = [...new Set(want.map((w) => w.category))].sort();
  const groups = [...new Set(want.flatMap((w) => w.classes.map((c) => `class ${c}`)))].sort();
  assert.notDeepEqual([0, 1, 2].map((i) => bfcl.category!(i)), want.map((w) => w.category));
  assert.notDeepEqual([...new Set([0, 1, 2].flatMap((i) => bfcl.groups!(i)))].sort(), groups);
  const server = await serveBfcl({ port: 0, dataDir: dir });
  const config = resolveConfig({ text: "", name: "eval" }, [
    "task=bfcl",
    "data.test_split=bfcl",
    `env.urls=${JSON.stringify([server.url])}`,
  ]);
  const env = await openEnv(config);
  try {
    await checkEnv(env);
    assert.equal(env.server, undefined, "the separate server is used, not an embedded one");
    const tok = wordTokenizer([bfcl.prompt.user, bfcl.prompt.assistant, "Nothing to do."]);
    const generator = new ScriptedSampler(tok, () => [], tok.id("<|im_end|>"), { fallback: "Nothing to do." });
    const { result, trajectories } = await evaluate(
      { generator, tokenizer: tok, client: env.client, task: env.task },
      [0, 1, 2],
      {
        maxRounds: bfcl.maxRounds,
        maxTokensPerTurn: 32,
        maxPromptLength: 1_000_000,
        maxResponseLength: 1_000_000,
        sampling: { temperature: 0, topP: 1, topK: 0 },
        stopIds: [tok.id("<|im_end|>")],
        samples: 2,
        seed: 0,
      },
    );
    assert.equal(trajectories.length, 6);
    assert.ok(trajectories.every((t) => t.finish === "done"), trajectories.map((t) => t.finish).join(", "));
    assert.deepEqual(Object.keys(result.byCategory).sort(), categories);
    assert.equal(result.byCategory.miss_func.tasks, 1);
    assert.equal(result.byCategory.long_context.tasks, 2);
    assert.deepEqual(result.perTask.map((r) => r.category), want.map((w) => w.category));
    assert.deepEqual(Object.keys(result.byGroup ?? {}).sort(), groups);
    for (const g of groups) {
      assert.equal(result.byGroup![g].tasks, want.filter((w) => w.classes.some((c) => `class ${c}` === g)).length, g);
    }
  } finally {
    await env.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the split comes from the server: its entries, and a built-in split past them is refused", async () => {
  const { dir } = await dataDir(["MathAPI"]);
  const server = await serveBfcl({ port: 0, dataDir: dir });
  const open = (split: string) =>
    openEnv(resolveConfig({ text: "", name: "eval" }, [
      "task=bfcl",
      `data.test_split=${split}`,
      `env.urls=${JSON.stringify([server.url])}`,
    ]));
  const env = await open("bfcl");
  try {
    const served = await env.client.tasks();
    assert.equal(served?.count, 3);
    assert.match(served?.about ?? "", /^BFCL's files from .*: 3 entries \(miss_func 1, long_context 2\)$/);
    const config = resolveConfig({ text: "", name: "eval" }, ["task=bfcl", "data.test_split=bfcl"]);
    assert.deepEqual(await splitIndices(config, { task: env.task, served }, "test"), { indices: [0, 1, 2] });
    // The generated test split (indices 400-499) would wrap around the 3 entries: refused, naming the server's set.
    const test = resolveConfig({ text: "", name: "eval" }, ["task=bfcl", "data.test_split=test"]);
    await assert.rejects(
      splitIndices(test, { task: env.task, served }, "test"),
      /split "test" \(data\.test_split\) names tasks up to index 499, but the bfcl server holds 3 tasks \(BFCL's files .*\), in splits bfcl/,
    );
  } finally {
    await env.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("generated tasks: /tasks publishes train and test, /reset names each entry's labels", async () => {
  const server = await bfcl.serve!({});
  // deno-lint-ignore no-explicit-any
  const post = async (path: string, b: unknown) => (await postJson(`${server.url}${path}`, b)).body as any;
  try {
    // deno-lint-ignore no-explicit-any
    const tasks = (await getJson(`${server.url}/tasks`)).body as any;
    assert.equal(tasks.count, 500);
    assert.deepEqual([tasks.splits.train.length, tasks.splits.test[0]], [400, 400]);
    const { id } = await post("/create", {});
    const reset = await post("/reset", { id, data_idx: 401 });
    assert.deepEqual(Object.keys(reset).sort(), ["done", "id", "info", "observation", "reward"]);
    assert.equal(reset.info.category, bfcl.category!(401));
    assert.deepEqual(reset.info.involved_classes.map((c: string) => `class ${c}`), bfcl.groups!(401));
    assert.match(reset.info.id, /^multi_turn_\w+_\d+$/);
    // `bfcl` (BFCL's 800 entries) is the task's own split, past the 500 generated entries: refused.
    const served = { count: tasks.count, splits: tasks.splits, about: tasks.about };
    const bfclSplit = resolveConfig({ text: "", name: "eval" }, ["task=bfcl", "data.test_split=bfcl"]);
    await assert.rejects(
      splitIndices(bfclSplit, { task: bfcl, served }, "test"),
      /up to index 799, but the bfcl server holds 500 tasks \(Crucible's generated tasks \(all eight classes; all four categories\): 400 train, 100 held-out/,
    );
    const testSplit = resolveConfig({ text: "", name: "eval" }, ["task=bfcl"]);
    const { indices, note } = await splitIndices(testSplit, { task: bfcl, served }, "test");
    assert.deepEqual([indices.length, indices[0], note], [100, 400, undefined]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a built-in split the server holds but does not publish comes with a note; mixed servers are refused", async () => {
  const served = { count: 800, splits: { bfcl: [...Array(800).keys()] }, about: "BFCL's files from DIR: 800 entries" };
  const c = resolveConfig({ text: "", name: "eval" }, ["task=bfcl"]);
  const { indices, note } = await splitIndices(c, { task: bfcl, served }, "test");
  assert.deepEqual([indices.length, indices[0]], [100, 400]);
  assert.equal(
    note,
    `note: split "test" (data.test_split) is bfcl's own tasks 400-499, which the server does not publish: the bfcl ` +
      "server holds 800 tasks (BFCL's files from DIR: 800 entries), in splits bfcl. Its tasks at those indices are " +
      "played and labelled as the server names them.",
  );
  const { dir } = await dataDir(["MathAPI"]);
  const [files, generated] = [await serveBfcl({ port: 0, dataDir: dir }), await bfcl.serve!({})];
  const client = envClient("bfcl", { urls: [files.url, generated.url] });
  try {
    await assert.rejects(client.tasks(), /servers hold different task sets \(.*: 3 tasks, .*: 500 tasks\)/);
  } finally {
    client.close();
    await files.shutdown();
    await generated.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("signal sampling and the report follow the entries served: their ids and categories, not the indices", async () => {
  const { dir, want } = await dataDir(["MathAPI", "VehicleControlAPI"]);
  const ids = ["multi_turn_miss_func_0", "multi_turn_long_context_0", "multi_turn_long_context_1"];
  const server = await serveBfcl({ port: 0, dataDir: dir });
  const client = envClient("bfcl", { urls: [server.url] });
  const run = `${dir}/run`;
  try {
    // GET /tasks publishes each entry's labels: the train split is grouped by them before any prompt is played.
    const served = await client.tasks();
    assert.deepEqual(served?.labels?.map((l) => [l.id, l.category]), ids.map((id, i) => [id, want[i].category]));
    const category = servedCategory(bfcl, served)!;
    assert.deepEqual(
      [...byCategory([0, 1, 2], (i) => category(i))],
      [["long_context", [1, 2]], ["miss_func", [0]]],
    );
    // Played groups count into the categories their resets named, even where no labels were published.
    const tok = wordTokenizer([bfcl.prompt.user, bfcl.prompt.assistant, "Nothing to do."]);
    const episodes = [0, 1, 2, 2].map((index) => ({ index, replies: ["Nothing to do."] }));
    const played = await playScripts(client, bfcl, tok, episodes);
    assert.deepEqual(played.map((t) => t.taskInfo?.id), [ids[0], ids[1], ids[2], ids[2]]);
    const pos: DataPosition = { epoch: 0, offset: 0 };
    recordSignal(pos, groupRewards(played), servedCategory(bfcl)!);
    assert.deepEqual(
      Object.entries(pos.categories ?? {}).map(([c, s]) => [c, s.groups]).sort(),
      [["long_context", 3], ["miss_func", 1]],
    );
    // The run's log keeps each episode's labels, and its report names the entry and its category.
    await Deno.mkdir(run);
    await Deno.writeTextFile(`${run}/config.yaml`, "task: bfcl\n");
    await appendEpisodes(`${run}/rollouts.jsonl`, { phase: "rl", step: 1 }, played, tok);
    const { run: report } = await readRun(run);
    assert.deepEqual(
      report.episodes.map((e) => [e.task, e.label, e.category]),
      [[0, ids[0], "miss_func"], [1, ids[1], "long_context"], [2, ids[2], "long_context"], [2, ids[2], "long_context"]],
    );
  } finally {
    client.close();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
