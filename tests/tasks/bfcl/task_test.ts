// The BFCL task's hooks: its oracle's demonstrations (in each call form) solve generated entries through the
// embedded server, categories and class groups come from the served entries, options are checked with the key's
// name, and evaluation reports rates by class group.
import assert from "node:assert/strict";
import { oracleReplies } from "../../../tasks/bfcl/mod.ts";
import { parseBfclOptions } from "../../../tasks/bfcl/options.ts";
import { generatedSource } from "../../../tasks/bfcl/server.ts";
import { TASKS } from "../../../tasks/mod.ts";
import { scoreEpisodes } from "../../../src/train/eval.ts";
import type { Trajectory } from "../../../src/rollout/trajectory.ts";
import { post as postJson } from "../../env/helpers.ts";

const bfcl = TASKS.bfcl;

/** POSTs JSON to a route of the server at `url` and answers the parsed body. */
// deno-lint-ignore no-explicit-any
const poster = (url: string) => async (path: string, b: unknown): Promise<any> =>
  (await postJson(`${url}${path}`, b)).body;

Deno.test("the oracle's replies solve generated entries through the embedded server, in every call form", async () => {
  const server = await bfcl.serve!({});
  const post = poster(server.url);
  try {
    const { id } = await post("/create", {});
    for (const call_format of ["python", "qwen", "tiny"] as const) {
      for (const index of [0, 1, 2, 401, 402]) {
        await post("/reset", { id, data_idx: index });
        let last = { reward: 0, done: false };
        for (const reply of await bfcl.oracle!(index, { call_format })) {
          last = await post("/step", { id, action: reply });
        }
        assert.deepEqual([last.done, last.reward], [true, 1], `${call_format} ${index}`);
        assert.ok(bfcl.isSuccess(last.reward));
      }
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("splits, categories and class groups of the generated tasks", () => {
  const src = generatedSource();
  assert.equal(bfcl.splits!.train.length + bfcl.splits!.test.length, src.entries.length);
  assert.equal(bfcl.category!(0), "base");
  assert.equal(bfcl.category!(1), "miss_param");
  assert.equal(bfcl.category!(2), "miss_func");
  assert.deepEqual(bfcl.groups!(0), src.entries[0].involvedClasses.map((c) => `class ${c}`));
  const replies = oracleReplies(src, 1, parseBfclOptions({}));
  assert.ok(replies.includes("I cannot do that yet: a function or a value I need is missing."));
});

Deno.test("options are checked with the key's name", () => {
  assert.deepEqual(parseBfclOptions({}), {
    data_dir: null,
    generated_classes: null,
    generated_categories: null,
    call_format: "python",
    format_errors: "feedback",
    strict_empty_turns: true,
    rewards: "pass",
    feedback: true,
  });
  assert.throws(() => parseBfclOptions({ rewards: "stage3" }), /task_options.rewards/);
  assert.throws(() => parseBfclOptions({ datadir: "x" }), /Unknown BFCL option "task_options.datadir".*data_dir/);
  assert.throws(() => parseBfclOptions({ call_format: "xml" }), /task_options.call_format/);
  assert.throws(() => parseBfclOptions({ generated_classes: ["FileSystem"] }), /task_options.generated_classes.0/);
  assert.throws(() => parseBfclOptions({ generated_categories: ["composite"] }), /task_options.generated_categories/);
});

Deno.test("evaluation reports rates by group when the task has groups", () => {
  const t = (task: number, success: boolean) => ({ task, success, finish: "done", reward: success ? 1 : 0 });
  const ts = [t(0, true), t(1, false), t(2, true)] as unknown as Trajectory[];
  const groups = (i: number) => i === 0 ? ["class A", "class B"] : ["class B"];
  const r = scoreEpisodes(ts, 1, () => "base", groups);
  assert.equal(r.byGroup!["class A"].avg, 1);
  assert.ok(Math.abs(r.byGroup!["class B"].avg - 2 / 3) < 1e-12);
  assert.equal(scoreEpisodes(ts, 1, () => "base").byGroup, undefined);
});

Deno.test("under EnvTuning's layout and progress reward the oracle's replies score 1", async () => {
  const options = parseBfclOptions({ call_format: "envtuning", rewards: "progress" });
  const server = await bfcl.serve!(options);
  const post = poster(server.url);
  try {
    const { id } = await post("/create", {});
    for (const index of [0, 1, 2]) {
      await post("/reset", { id, data_idx: index });
      let last = { reward: 0, done: false };
      for (const reply of await bfcl.oracle!(index, options)) last = await post("/step", { id, action: reply });
      assert.deepEqual([last.done, last.reward], [true, 1], `${index}`);
    }
    const junk = await post("/step", { id: (await post("/create", {})).id, action: "[ls()]" });
    assert.equal(junk.observation, "Error: Missing <think></think> tags");
  } finally {
    await server.shutdown();
  }
});

Deno.test("synthetic tasks: oracle episodes with the classes' results, and a held-out server that matches them", async () => {
  const synthetic = await bfcl.synthetic!({});
  const { Rng } = await import("../../../src/util/random.ts");
  const ep = synthetic.episode(new Rng(5), 0.5);
  assert.match(ep.opening, /^Here is a list of functions in JSON format/);
  assert.ok(ep.turns.length >= 3);
  assert.ok(ep.turns.every((t) => typeof t.reply === "string" && typeof t.observation === "string"));
  assert.ok(synthetic.names.includes("mkdir") && synthetic.names.includes("create_ticket"));
  const server = await synthetic.serve(99);
  const post = poster(server.url);
  try {
    const { id } = await post("/create", {});
    for (const index of [0, 1, 2]) {
      const held = synthetic.heldOut(99, index);
      assert.equal((await post("/reset", { id, data_idx: index })).observation, held.opening);
      let last = { reward: 0, done: false };
      for (const t of held.turns) {
        last = await post("/step", { id, action: t.reply });
        if (!last.done) assert.equal((last as unknown as { observation: string }).observation, t.observation);
      }
      assert.deepEqual([last.done, last.reward], [true, 1]);
      assert.equal(synthetic.category(index), ["base", "miss_param", "miss_func"][index]);
    }
  } finally {
    await server.shutdown();
  }
});
