// The BFCL server over AgentGym's protocol (in-process, loopback, port 0): an episode played with its ground truth
// passes, /step answers info.calls and a verdict at each turn's end, bad model output (unknown function, wrong
// arguments, text around the call, a broken call) is answered with BFCL's error text while the episode goes on, a
// held-out function arrives with BFCL's sentence, and BFCL's own files from a data directory are served.
import assert from "node:assert/strict";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { DOC_FILES } from "../../../tasks/bfcl/classes/docs.ts";
import { ADDITIONAL_FUNCTION_SENTENCE } from "../../../tasks/bfcl/episode.ts";
import { generateEntries } from "../../../tasks/bfcl/generator.ts";
import { type BfclSource, serveBfcl } from "../../../tasks/bfcl/server.ts";
import { GENERATED_DOCS } from "../../../tasks/bfcl/tool_docs.ts";
import { get as getJson, post as postJson } from "../../env/helpers.ts";

// The generator's original classes and categories (entry 0 involves the file system, whose errors are checked below).
const ENTRIES = generateEntries({
  seed: 11,
  count: 6,
  split: "train",
  classes: ["GorillaFileSystem", "MathAPI", "TwitterAPI", "TicketAPI"],
  categories: ["base", "miss_param", "miss_func"],
}, newInstance);
const SOURCE: BfclSource = { entries: ENTRIES, docs: GENERATED_DOCS };

// deno-lint-ignore no-explicit-any
type Json = any;

async function withServer(
  source: BfclSource,
  body: (post: (path: string, b: unknown) => Promise<Json>) => Promise<void>,
) {
  const server = await serveBfcl({ port: 0, source });
  const post = async (path: string, b: unknown): Promise<Json> => (await postJson(`${server.url}${path}`, b)).body;
  try {
    await body(post);
  } finally {
    await server.shutdown();
  }
}

Deno.test("an episode played with its ground truth passes, with calls and verdicts in info", async () => {
  await withServer(SOURCE, async (post) => {
    for (const [index, entry] of ENTRIES.entries()) {
      const { id } = await post("/create", {});
      const reset = await post("/reset", { id, data_idx: index });
      assert.match(reset.observation, /^Here is a list of functions in JSON format that you can invoke\.\n\{"name"/);
      let last;
      for (const [t, turn] of entry.groundTruth.entries()) {
        if (turn.length) {
          const step = await post("/step", { id, action: `[${turn.join(", ")}]` });
          assert.equal(step.done, false);
          assert.deepEqual(step.info.calls.map((c: { call: string }) => c.call), turn);
          assert.ok(step.info.calls.every((c: { result: string }) => typeof c.result === "string"));
        }
        last = await post("/step", { id, action: "Done." });
        assert.deepEqual(last.info.verdict, { turn: t, valid: true }, `${entry.id} turn ${t}`);
      }
      assert.equal(last.done, true);
      assert.equal(last.reward, 1, entry.id);
      await post("/close", { id });
    }
  });
});

Deno.test("bad model output gets BFCL's error text and the episode goes on", async () => {
  await withServer(SOURCE, async (post) => {
    const { id } = await post("/create", {});
    await post("/reset", { id, data_idx: 0 });
    const unknown = await post("/step", { id, action: "[launch_rocket(target='moon')]" });
    assert.equal(unknown.observation, "Error during execution: name 'launch_rocket' is not defined");
    assert.equal(unknown.done, false);
    const wrongArg = await post("/step", { id, action: "[cd(directory='x')]" });
    assert.equal(
      wrongArg.observation,
      "Error during execution: GorillaFileSystem.cd() got an unexpected keyword argument 'directory'",
    );
    const around = await post("/step", { id, action: "Sure, here you go: [ls(a=True)]" });
    assert.match(around.observation, /not a list of function calls/);
    assert.equal(around.info.format_error, around.observation);
    const broken = await post("/step", { id, action: '<tool_call>\n{"name": "ls"\n</tool_call>' });
    assert.match(broken.observation, /not JSON/);
    const wrongType = await post("/step", { id, action: "[cat(file_name=42)]" });
    // A wrong argument type gets the TypeError Python's class raises.
    assert.equal(wrongType.observation, "Error during execution: argument of type 'int' is not iterable");
    const ok = await post("/step", { id, action: '<tool_call>\n{"name": "pwd", "arguments": {}}\n</tool_call>' });
    assert.deepEqual(ok.info.calls.map((c: { call: string }) => c.call), ["pwd()"]);
    assert.equal(ok.done, false);
    // The turn's end: the wrong calls above fail it, and the verdict names turn 0 and the reason.
    const end = await post("/step", { id, action: "I am done." });
    assert.equal(end.info.verdict.turn, 0);
    assert.equal(end.info.verdict.valid, false);
    assert.match(end.info.verdict.reason, /turn 0/);
  });
});

Deno.test("more than 20 steps in a turn force-quit the entry", async () => {
  await withServer(SOURCE, async (post) => {
    const { id } = await post("/create", {});
    await post("/reset", { id, data_idx: 0 });
    let step;
    for (let i = 0; i < 21; i++) step = await post("/step", { id, action: "[pwd()]" });
    assert.equal(step.done, true);
    assert.equal(step.reward, 0);
    assert.equal(step.info.verdict.error_type, "multi_turn:force_terminated");
  });
});

Deno.test("a held-out function arrives on its turn with BFCL's sentence", async () => {
  const entry = ENTRIES.find((e) => e.category === "miss_func")!;
  const turn = Number(Object.keys(entry.missedFunction)[0]);
  const name = entry.missedFunction[String(turn)][0];
  await withServer({ entries: [entry], docs: GENERATED_DOCS }, async (post) => {
    const { id } = await post("/create", {});
    const reset = await post("/reset", { id, data_idx: 0 });
    assert.ok(!reset.observation.includes(`"name":"${name}"`), `${name} is held out at first`);
    let obs;
    for (let t = 0; t < turn; t++) obs = await post("/step", { id, action: "Nothing to do." });
    assert.ok(obs.observation.endsWith(`\n${ADDITIONAL_FUNCTION_SENTENCE}`));
    assert.ok(obs.observation.startsWith(`[{'name': '${name}'`));
  });
});

Deno.test("BFCL's own files from a data directory are served in file order", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/possible_answer`);
  await Deno.mkdir(`${dir}/multi_turn_func_doc`);
  const e = ENTRIES[0];
  const q = {
    id: "multi_turn_base_0",
    question: e.question,
    initial_config: e.initialConfig,
    involved_classes: e.involvedClasses,
  };
  await Deno.writeTextFile(`${dir}/BFCL_v3_multi_turn_base.json`, JSON.stringify(q) + "\n");
  await Deno.writeTextFile(
    `${dir}/possible_answer/BFCL_v3_multi_turn_base.json`,
    JSON.stringify({ id: q.id, ground_truth: e.groundTruth }) + "\n",
  );
  for (const [cls, docs] of Object.entries(GENERATED_DOCS)) {
    const text = docs.map((d) => JSON.stringify(d)).join("\n");
    await Deno.writeTextFile(`${dir}/multi_turn_func_doc/${DOC_FILES[cls]}`, text);
  }
  const server = await serveBfcl({ port: 0, dataDir: dir });
  try {
    const post = async (path: string, b: unknown): Promise<Json> => (await postJson(`${server.url}${path}`, b)).body;
    const { id } = await post("/create", {});
    const reset = await post("/reset", { id, data_idx: 0 });
    assert.ok(reset.observation.endsWith(e.question[0][0].content));
    assert.equal((await getJson(`${server.url}/`)).body, "This is environment BFCL.");
  } finally {
    await server.shutdown();
  }
});
