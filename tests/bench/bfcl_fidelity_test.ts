// The comparison behind `deno task bench bfcl-replay --upstream`: the call rewrites (hand-worked), the comparator
// (silent on an identical replay, naming the call or the attribute on a changed one), and bfcl_upstream.py's line
// format, run by python3 against a stand-in for gorilla's package (the real one runs in bfcl_data_test.ts when
// BFCL_DATA_DIR and BFCL_UPSTREAM are given).
import assert from "node:assert/strict";
import {
  compareEntry,
  type UpstreamLine,
  upstreamLines,
  variantCall,
  variantEntry,
} from "../../bench/bfcl_fidelity.ts";
import { newInstance } from "../../tasks/bfcl/classes/api.ts";
import { toPlain } from "../../tasks/bfcl/classes/py.ts";
import { parseGroundTruth } from "../../tasks/bfcl/checker.ts";
import { executeCall, newInstances } from "../../tasks/bfcl/execute.ts";
import { generateEntries } from "../../tasks/bfcl/generator.ts";
import type { BfclEntry } from "../../tasks/bfcl/entries.ts";
import { GENERATED_DOCS } from "../../tasks/bfcl/tool_docs.ts";

Deno.test("call rewrites: numbers' kinds, keywords as positionals in signature order, shifted and quoted numbers", () => {
  const params = (m: string) => ({ mv: ["source", "destination"], f: ["a", "b", "c"] } as Record<string, string[]>)[m];
  assert.equal(variantCall("fillFuelTank(fuelAmount=40)", "floats", params), "fillFuelTank(fuelAmount=40.0)");
  assert.equal(variantCall("mean(numbers=[1, 2.5, 3])", "floats", params), "mean(numbers=[1.0, 2.5, 3.0])");
  assert.equal(
    variantCall("logarithm(value=36.0, base=6, precision=4)", "ints", params),
    "logarithm(value=36, base=6, precision=4)",
  );
  assert.equal(variantCall("mv(destination='b', source='a')", "positional", params), "mv('a', 'b')");
  // Only a run of keywords that continues the positionals can move: c stays a keyword once b is absent.
  assert.equal(variantCall("f(a=1, c=3)", "positional", params), "f(1, c=3)");
  assert.equal(variantCall("f(1, b=2)", "positional", params), "f(1, 2)");
  assert.equal(variantCall("g(x={'k': [2, 3.0]})", "halves", params), "g(x={'k': [2.5, 3.5]})");
  assert.equal(variantCall("g(x=2, y=-3.0)", "negated", params), "g(x=-2, y=3.0)");
  assert.equal(variantCall("g(x=2, y=3.0, z='s')", "strings", params), "g(x='2', y='3.0', z='s')");
});

/** Upstream's line as Crucible's own classes would give it: each turn's results and states after it. */
function selfLine(e: BfclEntry): UpstreamLine {
  const inst = newInstances(e, newInstance);
  const results = e.groundTruth.map((turn, t) => turn.map((c) => executeCall(inst, parseGroundTruth(e, t, c))));
  const states = e.groundTruth.map(() => ({})) as UpstreamLine["states"];
  // States after every turn: replay turn by turn on a second set of instances.
  const again = newInstances(e, newInstance);
  e.groundTruth.forEach((turn, t) => {
    turn.forEach((c) => executeCall(again, parseGroundTruth(e, t, c)));
    states[t] = Object.fromEntries(
      [...again.byClass].map(([cls, i]) => [cls, toPlain(i.state()) as Record<string, unknown>]),
    );
  });
  return { id: e.id, results, states };
}

Deno.test("the comparator is silent on an identical replay and names a changed result or state", () => {
  const entries = generateEntries(
    { seed: 3, count: 6, split: "test", classes: ["GorillaFileSystem", "MathAPI"] },
    newInstance,
  );
  for (const e of entries) {
    const r = compareEntry(e, GENERATED_DOCS, selfLine(e));
    assert.deepEqual(r.mismatches, [], e.id);
    assert.ok(r.passed && r.calls > 0 && r.callsEqual === r.calls && r.statesEqual === r.turns, e.id);
  }
  const e = entries.find((x) => x.groundTruth.some((t) => t.length > 0))!;
  const t = e.groundTruth.findIndex((turn) => turn.length > 0);
  const changed = selfLine(e);
  changed.results[t][0] = `${changed.results[t][0]} `;
  const r = compareEntry(e, GENERATED_DOCS, changed);
  assert.equal(r.callsEqual, r.calls - 1);
  assert.deepEqual(r.mismatches.map((m) => [m.kind, m.turn]), [["result", t]]);
  const stated = selfLine(e);
  const cls = Object.keys(stated.states[t])[0];
  const attr = Object.keys(stated.states[t][cls])[0];
  stated.states[t][cls][attr] = "something else";
  const s = compareEntry(e, GENERATED_DOCS, stated);
  assert.deepEqual(s.mismatches, [{ id: e.id, kind: "state", turn: t, className: cls, attribute: attr }]);
  // A variant keeps the entry and rewrites only its calls.
  const v = variantEntry(e, "floats");
  assert.equal(v.id, e.id);
  assert.equal(v.groundTruth.flat().length, e.groundTruth.flat().length);
});

const FAKE_UTILS = `
class File:
    def __init__(self, name, content):
        self.name, self.content = name, content

class Directory:
    def __init__(self, name, parent, contents):
        self.name, self.parent, self.contents = name, parent, contents

class Fake:
    def __init__(self):
        self.count = 3
        self.ratio = 2.0
        self.tags = {"b", "a"}
        self.keyed = {10.0: "x", True: "y"}  # keys as Python == sees them: 10 and 1
        self.pair = (1, "z")
        self.root = Directory("/", None, {"f": File("f", "hi")})
        self._hidden = 1

def execute_multi_turn_func_call(func_call_list, initial_config, involved_classes, model_name, test_entry_id,
                                 long_context=False, is_evaL_run=False):
    return [f"ran {c} on {test_entry_id}" for c in func_call_list], {"Fake": Fake()}
`;

Deno.test("bfcl_upstream.py: one line per entry with results by turn and states in toPlain's form", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pkg = `${dir}/up/bfcl_eval/eval_checker/multi_turn_eval`;
    await Deno.mkdir(pkg, { recursive: true });
    for (const p of ["bfcl_eval", "bfcl_eval/eval_checker", "bfcl_eval/eval_checker/multi_turn_eval"]) {
      await Deno.writeTextFile(`${dir}/up/${p}/__init__.py`, "");
    }
    await Deno.writeTextFile(`${pkg}/multi_turn_utils.py`, FAKE_UTILS);
    await Deno.mkdir(`${dir}/data/possible_answer`, { recursive: true });
    const q = { id: "multi_turn_base_0", question: [[], []], initial_config: {}, involved_classes: ["Fake"] };
    await Deno.writeTextFile(`${dir}/data/BFCL_v4_multi_turn_base.json`, JSON.stringify(q) + "\n");
    const a = { id: "multi_turn_base_0", ground_truth: [["cd('x')", "ls()"], []] };
    await Deno.writeTextFile(`${dir}/data/possible_answer/BFCL_v4_multi_turn_base.json`, JSON.stringify(a) + "\n");
    const lines = [];
    for await (const l of upstreamLines({ upstream: `${dir}/up`, dataDir: `${dir}/data` })) lines.push(l);
    assert.equal(lines.length, 1);
    assert.deepEqual(lines[0].results, [["ran cd('x') on multi_turn_base_0", "ran ls() on multi_turn_base_0"], []]);
    assert.deepEqual(lines[0].states[0], {
      Fake: {
        count: 3,
        ratio: 2,
        tags: ["a", "b"],
        keyed: { "10": "x", "1": "y" },
        pair: [1, "z"],
        root: { type: "directory", name: "/", contents: { f: { type: "file", name: "f", content: "hi" } } },
      },
    });
    // Given answers replace possible_answer/.
    const answers = `${dir}/answers.jsonl`;
    await Deno.writeTextFile(answers, JSON.stringify({ id: "multi_turn_base_0", ground_truth: [["pwd()"], []] }));
    const given = [];
    for await (const l of upstreamLines({ upstream: `${dir}/up`, dataDir: `${dir}/data`, answers })) given.push(l);
    assert.deepEqual(given[0].results, [["ran pwd() on multi_turn_base_0"], []]);
    // A folder without gorilla's package fails naming what it needs.
    await assert.rejects(async () => {
      for await (const _ of upstreamLines({ upstream: `${dir}/nowhere`, dataDir: `${dir}/data` })) continue;
    }, /berkeley-function-call-leaderboard folder/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
