// The task generator: seeded, in BFCL's entry format, its ground truth runs without errors and passes the checker
// when played as the model's calls, its categories are laid out as BFCL's, and train and held-out splits share no
// scenario. Runs over the classes implemented so far.
import assert from "node:assert/strict";
import { CLASS_NAMES, newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { checkEntry, parseGroundTruth } from "../../../tasks/bfcl/checker.ts";
import { toEntry } from "../../../tasks/bfcl/entries.ts";
import { ERROR_PREFIX, executeCall, newInstances } from "../../../tasks/bfcl/execute.ts";
import { generateEntries, scenarioSplit } from "../../../tasks/bfcl/generator.ts";
import { WORLDS } from "../../../tasks/bfcl/worlds.ts";

const CLASSES = CLASS_NAMES.filter((c) => c in WORLDS);

Deno.test("generated entries are seeded and in BFCL's format", () => {
  const a = generateEntries({ seed: 3, count: 12, split: "train", classes: CLASSES }, newInstance);
  const b = generateEntries({ seed: 3, count: 12, split: "train", classes: CLASSES }, newInstance);
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, generateEntries({ seed: 4, count: 12, split: "train", classes: CLASSES }, newInstance));
  for (const e of a) {
    // The entry survives the same checks as BFCL's own files, written as BFCL writes them.
    const q = {
      id: e.id,
      question: e.question,
      initial_config: e.initialConfig,
      involved_classes: e.involvedClasses,
      missed_function: e.missedFunction,
    };
    assert.deepEqual(toEntry(JSON.parse(JSON.stringify(q)), { id: e.id, ground_truth: e.groundTruth }, ["q", "a"]), e);
    assert.ok(e.groundTruth.length >= 2);
  }
  assert.deepEqual(a.slice(0, 3).map((e) => e.category), ["base", "miss_param", "miss_func"]);
});

Deno.test("missing-parameter and missing-function entries are laid out as BFCL's", () => {
  for (const e of generateEntries({ seed: 5, count: 18, split: "train", classes: CLASSES }, newInstance)) {
    const empty = e.groundTruth.map((g, i) => g.length === 0 ? i : -1).filter((i) => i >= 0);
    if (e.category === "base") assert.deepEqual(empty, []);
    else assert.equal(empty.length, 1, e.id);
    if (e.category === "miss_func") {
      const [turn, names] = Object.entries(e.missedFunction)[0];
      assert.equal(Number(turn), empty[0] + 1);
      assert.deepEqual(e.question[Number(turn)], []);
      const earlier = e.groundTruth.slice(0, Number(turn)).flat().map((c) => c.split("(")[0]);
      for (const n of names) assert.ok(!earlier.includes(n), `${e.id}: ${n} used before it is given`);
    }
  }
});

Deno.test("ground truth runs without errors and passes the checker when played", () => {
  for (const e of generateEntries({ seed: 7, count: 30, split: "test", classes: CLASSES }, newInstance)) {
    const inst = newInstances(e, newInstance);
    e.groundTruth.forEach((turn, t) => {
      for (const text of turn) {
        const result = executeCall(inst, parseGroundTruth(e, t, text));
        assert.ok(!result.startsWith(ERROR_PREFIX) && !result.startsWith('{"error"'), `${e.id}: ${text} -> ${result}`);
      }
    });
    const played = e.groundTruth.map((turn, t) => turn.length ? [turn.map((c) => parseGroundTruth(e, t, c))] : []);
    assert.deepEqual(checkEntry(e, played, newInstance), { valid: true }, e.id);
    // Dropping the last turn's calls fails it: the ground truth is not vacuous.
    const last = played.length - 1;
    const cut = played.map((s, t) => t === last ? [] : s);
    assert.equal(checkEntry(e, cut, newInstance).valid, false, e.id);
  }
});

Deno.test("train and held-out splits share no scenario", () => {
  const key = (e: { question: unknown; initialConfig: unknown }) => JSON.stringify([e.question, e.initialConfig]);
  const train = generateEntries({ seed: 1, count: 60, split: "train", classes: CLASSES }, newInstance);
  const test = generateEntries({ seed: 1, count: 30, split: "test", classes: CLASSES }, newInstance);
  assert.ok(train.every((e) => scenarioSplit(e) === "train") && test.every((e) => scenarioSplit(e) === "test"));
  const trainKeys = new Set(train.map(key));
  assert.ok(test.every((e) => !trainKeys.has(key(e))));
});
