// The BFCL checker on a fake notes class: ground truth replayed passes; a changed argument, a missing call, an extra
// call on an empty-ground-truth turn and a state difference each fail, naming the turn and the reason. Also the
// executor's result texts (NameError for an unknown function, raised errors, json.dumps of dicts, str of lists).
import assert from "node:assert/strict";
import { type CheckedEntry, checkEntry, missingItems, pyEqual, TurnChecker } from "../../../tasks/bfcl/checker.ts";
import { executeCall, newInstances } from "../../../tasks/bfcl/execute.ts";
import { parseCallList, type ParsedCall } from "../../../tasks/bfcl/literal.ts";
import { PyFloat } from "../../../tasks/bfcl/classes/py.ts";
import { fakeInstance } from "./fake.ts";

const ENTRY: CheckedEntry = {
  id: "multi_turn_base_7",
  involvedClasses: ["NotesAPI", "MathLite"],
  initialConfig: { NotesAPI: { notes: { todo: "milk" } } },
  longContext: false,
  groundTruth: [
    ["add_note(title='plan', text='ship it')", "list_notes()"],
    [],
    ["delete_note(title='todo')", "add(a=2, b=3)"],
  ],
};

/** Turns of single-step model replies, each reply a python call list. */
function turns(...replies: string[][]): ParsedCall[][][] {
  return replies.map((steps) => steps.map((s) => parseCallList(s)));
}

const GT = turns(
  ["[add_note(title='plan', text='ship it'), list_notes()]"],
  [],
  ["[delete_note(title='todo')]", "[add(a=2, b=3)]"],
);

Deno.test("the executor writes BFCL's result texts", () => {
  const inst = newInstances(ENTRY, fakeInstance);
  const run = (s: string) => executeCall(inst, parseCallList(s)[0]);
  assert.equal(run("add_note(title='a', text='b')"), '{"added": "a"}');
  assert.equal(run("list_notes()"), "['todo', 'a']");
  assert.equal(run("delete_note(title='zzz')"), "Error during execution: No note named zzz");
  assert.equal(run("rm(file='x')"), "Error during execution: name 'rm' is not defined");
  assert.equal(run("os.system(cmd='x')"), "Error during execution: name 'os' is not defined");
  assert.equal(run("exit(code=1)"), "Error during execution: Function call exit is not allowed.");
  assert.equal(
    run("add_note(text='b')"),
    "Error during execution: NotesAPI.add_note() missing 1 required positional argument: 'title'",
  );
});

Deno.test("ground truth replayed as the model's calls passes", () => {
  assert.deepEqual(checkEntry(ENTRY, GT, fakeInstance), { valid: true });
  // Calls may come in any order within the turn's results, and earlier turns' results count.
  const reordered = turns(["[list_notes()]", "[add_note(title='plan', text='ship it')]"], [], [
    "[add(a=2, b=3), delete_note(title='todo')]",
  ]);
  const v = checkEntry(ENTRY, reordered, fakeInstance);
  // list_notes before the add returns a different list, so the response check fails on turn 0.
  assert.equal(v.valid, false);
  assert.equal(!v.valid && v.errorType, "multi_turn:execution_response_mismatch");
  assert.equal(!v.valid && v.turn, 0);
});

Deno.test("a changed argument fails the state check and names the turn", () => {
  const v = checkEntry(
    ENTRY,
    turns(["[add_note(title='plan', text='ship it later'), list_notes()]"], [], ["[delete_note(title='todo')]"]),
    fakeInstance,
  );
  assert.equal(v.valid, false);
  if (v.valid) return;
  assert.equal(v.turn, 0);
  assert.equal(v.errorType, "multi_turn:instance_state_mismatch");
  assert.match(v.reason, /NotesAPI.*notes differ.*turn 0/);
});

Deno.test("a missing call fails: an empty turn, or a missing result", () => {
  const empty = checkEntry(ENTRY, turns([], [], []), fakeInstance);
  assert.equal(!empty.valid && empty.errorType, "multi_turn:empty_turn_model_response");
  assert.equal(!empty.valid && empty.turn, 0);
  const firstTurn = ["[add_note(title='plan', text='ship it'), list_notes()]"];
  const noAdd = checkEntry(ENTRY, turns(firstTurn, [], ["[delete_note(title='todo')]"]), fakeInstance);
  assert.equal(!noAdd.valid && noAdd.turn, 2);
  assert.equal(!noAdd.valid && noAdd.errorType, "multi_turn:execution_response_mismatch");
  assert.deepEqual(!noAdd.valid && noAdd.details, { missing_items: ['{"result": 5}'] });
});

Deno.test("a call on a turn with empty ground truth fails, unless strictEmptyTurns is off (BFCL's runner)", () => {
  const extra = turns(["[add_note(title='plan', text='ship it'), list_notes()]"], ["[add(a=1, b=1)]"], [
    "[delete_note(title='todo'), add(a=2, b=3)]",
  ]);
  const v = checkEntry(ENTRY, extra, fakeInstance);
  assert.equal(!v.valid && v.turn, 1);
  assert.equal(!v.valid && v.errorType, "multi_turn:irrelevance_error:decoder_success");
  assert.deepEqual(checkEntry(ENTRY, extra, fakeInstance, { strictEmptyTurns: false }), { valid: true });
});

Deno.test("calls made but not run on an empty-ground-truth turn (EnvTuning's rule) fail it and change no state", () => {
  const checker = new TurnChecker(ENTRY, fakeInstance);
  assert.equal(checker.turn(GT[0]).valid, true);
  const v = checker.turn([], { unrun: 1 });
  assert.equal(!v.valid && v.errorType, "multi_turn:irrelevance_error:decoder_success");
  assert.match(!v.valid ? v.reason : "", /should not for turn 1/);
  // Nothing ran, so the last turn's states still match.
  assert.equal(checker.turn(GT[2]).valid, true);
  const lenient = new TurnChecker(ENTRY, fakeInstance, { strictEmptyTurns: false });
  lenient.turn(GT[0]);
  assert.deepEqual(lenient.turn([], { unrun: 2 }), { valid: true });
});

Deno.test("a state difference left by an extra call fails the next checked turn", () => {
  const firstTurn = ["[add_note(title='plan', text='ship it'), list_notes()]"];
  const last = ["[delete_note(title='todo'), add(a=2, b=3), add_note(title='extra', text='')]"];
  const v = checkEntry(ENTRY, turns(firstTurn, [], last), fakeInstance);
  assert.equal(!v.valid && v.turn, 2);
  assert.equal(!v.valid && v.errorType, "multi_turn:instance_state_mismatch");
});

Deno.test("a transcript cut short (forced quit) fails; the turn checker goes on after a failed turn", () => {
  const v = checkEntry(ENTRY, GT.slice(0, 2), fakeInstance);
  assert.equal(!v.valid && v.errorType, "multi_turn:force_terminated");
  const checker = new TurnChecker(ENTRY, fakeInstance);
  assert.equal(checker.turn([]).valid, false);
  assert.equal(checker.turn([]).valid, true);
  assert.throws(
    () => new TurnChecker({ ...ENTRY, groundTruth: [["add_note(title=)"]] }, fakeInstance).turn([]),
    /multi_turn_base_7.*ground_truth.*turn 0/,
  );
});

Deno.test("Python equality and the sub-multiset rule", () => {
  assert.ok(pyEqual({ a: 1, b: [new PyFloat(2)] }, { b: [2], a: 1.0 }));
  assert.ok(!pyEqual({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!pyEqual(["x"], "x"));
  assert.deepEqual(missingItems(["a", "a", "b"], ["b", "a", "c"]), ["a"]);
  assert.deepEqual(missingItems(["a", "b"], ["b", "a", "a"]), []);
});
