// BFCL's entry files read from a data directory laid out as bfcl_eval/data/: v3 and v4 names, possible_answer/
// beside, tool documents; a malformed entry or directory stops with one message naming the file, the id and the field.
import assert from "node:assert/strict";
import { loadBfclDir } from "../../../tasks/bfcl/entries.ts";

const Q = {
  id: "multi_turn_base_0",
  question: [[{ role: "user", content: "Make a note." }], []],
  initial_config: { NotesAPI: { notes: {} } },
  involved_classes: ["MathAPI"],
  path: ["MathAPI.add"],
};
const A = { id: "multi_turn_base_0", ground_truth: [["add(a=1, b=2)"], []] };
const MISS = {
  ...Q,
  id: "multi_turn_miss_func_3",
  question: [[{ role: "user", content: "Add." }], []],
  missed_function: { "1": ["add"] },
};
const DOC = {
  name: "add",
  description: "Add two numbers.",
  parameters: { type: "dict", properties: { a: {}, b: {} } },
};

async function dataDir(files: Record<string, unknown[]>): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/possible_answer`);
  await Deno.mkdir(`${dir}/multi_turn_func_doc`);
  for (const [name, lines] of Object.entries(files)) {
    await Deno.writeTextFile(
      `${dir}/${name}`,
      lines.map((l) => typeof l === "string" ? l : JSON.stringify(l)).join("\n") + "\n",
    );
  }
  return dir;
}

Deno.test("entries load in category order with their ground truth and tool documents", async () => {
  const dir = await dataDir({
    "BFCL_v3_multi_turn_miss_func.json": [MISS],
    "possible_answer/BFCL_v3_multi_turn_miss_func.json": [{ ...A, id: MISS.id }],
    "BFCL_v4_multi_turn_base.json": [Q],
    "possible_answer/BFCL_v4_multi_turn_base.json": [A],
    "multi_turn_func_doc/math_api.json": [DOC],
  });
  const { entries, docs } = await loadBfclDir(dir);
  assert.deepEqual(entries.map((e) => [e.id, e.category]), [["multi_turn_base_0", "base"], [MISS.id, "miss_func"]]);
  assert.deepEqual(entries[0].groundTruth, [["add(a=1, b=2)"], []]);
  assert.deepEqual(entries[1].missedFunction, { "1": ["add"] });
  assert.equal(entries[0].longContext, false);
  assert.deepEqual(docs.MathAPI.map((d) => d.name), ["add"]);
});

Deno.test("a malformed entry names the file, the entry id and the field", async () => {
  const cases: [Record<string, unknown[]>, RegExp][] = [
    [{
      "BFCL_v3_multi_turn_base.json": [{ ...Q, question: "hi" }],
      "possible_answer/BFCL_v3_multi_turn_base.json": [A],
    }, /BFCL_v3_multi_turn_base\.json: entry multi_turn_base_0, field "question"/],
    [
      {
        "BFCL_v3_multi_turn_base.json": [Q],
        "possible_answer/BFCL_v3_multi_turn_base.json": [{ ...A, ground_truth: [["x()"]] }],
      },
      /possible_answer\/BFCL_v3_multi_turn_base\.json: entry multi_turn_base_0, field "ground_truth": has 1 turns but the question has 2/,
    ],
    [{
      "BFCL_v3_multi_turn_base.json": [{ ...Q, involved_classes: "MathAPI" }],
      "possible_answer/BFCL_v3_multi_turn_base.json": [A],
    }, /entry multi_turn_base_0, field "involved_classes"/],
    [{
      "BFCL_v3_multi_turn_base.json": [{ ...Q, missed_function: { "9": ["add"] } }],
      "possible_answer/BFCL_v3_multi_turn_base.json": [A],
    }, /entry multi_turn_base_0, field "missed_function": names turn "9"/],
    [
      { "BFCL_v3_multi_turn_base.json": [{ ...Q, id: 5 }], "possible_answer/BFCL_v3_multi_turn_base.json": [A] },
      /entry \(no id\), field "id"/,
    ],
    [
      { "BFCL_v3_multi_turn_base.json": ["{not json"], "possible_answer/BFCL_v3_multi_turn_base.json": [A] },
      /BFCL_v3_multi_turn_base\.json, line 1: not JSON/,
    ],
    [{
      "BFCL_v3_multi_turn_base.json": [{ ...Q, involved_classes: ["Nope"] }],
      "possible_answer/BFCL_v3_multi_turn_base.json": [A],
    }, /Entry multi_turn_base_0, field "involved_classes": unknown class Nope/],
    [{ "BFCL_v3_multi_turn_base.json": [Q] }, /has no answers beside it/],
    [
      { "BFCL_v3_multi_turn_base.json": [Q], "possible_answer/BFCL_v3_multi_turn_base.json": [A] },
      /Missing .*math_api\.json/,
    ],
    [{}, /No BFCL multi-turn files in .*BFCL_v4_multi_turn_base\.json/],
  ];
  for (const [files, want] of cases) {
    const dir = await dataDir(files);
    if (!Object.keys(files).some((f) => f.includes("Nope") || f.includes("func_doc"))) {
      await Deno.writeTextFile(`${dir}/multi_turn_func_doc/math_api.json`, JSON.stringify(DOC));
    }
    if (want.source.startsWith("Missing")) await Deno.remove(`${dir}/multi_turn_func_doc/math_api.json`);
    await assert.rejects(() => loadBfclDir(dir), want, want.source);
  }
});
