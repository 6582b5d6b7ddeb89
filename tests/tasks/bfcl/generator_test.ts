// The task generator: seeded, in BFCL's entry format, its ground truth runs without errors and passes the checker
// when played as the model's calls (every class and category) while a changed argument fails it, its categories are
// laid out as BFCL's, train and held-out splits share no scenario, every class and long_context appear, the tool
// documents agree with BFCL's, and the original four classes and three categories still draw what they drew.
import assert from "node:assert/strict";
import { CLASS_NAMES, functionDocs, newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { checkEntry, parseGroundTruth } from "../../../tasks/bfcl/checker.ts";
import { toEntry } from "../../../tasks/bfcl/entries.ts";
import { ERROR_PREFIX, executeCall, newInstances } from "../../../tasks/bfcl/execute.ts";
import { GENERATED_CATEGORIES, generateEntries, scenarioSplit } from "../../../tasks/bfcl/generator.ts";
import { PyFloat } from "../../../tasks/bfcl/classes/py.ts";
import type { ParsedCall, PyValue } from "../../../tasks/bfcl/literal.ts";
import { GENERATED_DOCS } from "../../../tasks/bfcl/tool_docs.ts";
import { WORLDS } from "../../../tasks/bfcl/worlds.ts";
import type { BfclEntry } from "../../../tasks/bfcl/entries.ts";

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
  assert.deepEqual(a.slice(0, 4).map((e) => e.category), ["base", "miss_param", "miss_func", "long_context"]);
  assert.deepEqual(a.map((e) => e.longContext), a.map((e) => e.category === "long_context"));
});

Deno.test("missing-parameter and missing-function entries are laid out as BFCL's", () => {
  for (const e of generateEntries({ seed: 5, count: 18, split: "train", classes: CLASSES }, newInstance)) {
    const empty = e.groundTruth.map((g, i) => g.length === 0 ? i : -1).filter((i) => i >= 0);
    if (e.category === "base" || e.category === "long_context") assert.deepEqual(empty, []);
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

/** Plays an entry's ground truth (or `turns`) as the model's calls through the checker. */
function play(
  e: BfclEntry,
  turns: ParsedCall[][] = e.groundTruth.map((t, i) => t.map((c) => parseGroundTruth(e, i, c))),
) {
  return checkEntry(e, turns.map((t) => t.length ? [t] : []), newInstance);
}

/** The value with one change a user would notice: another string, number, truth value, list or dict. */
function changed(v: PyValue): PyValue {
  if (typeof v === "string") return `${v}_2`;
  if (typeof v === "number") return v + 7;
  if (v instanceof PyFloat) return new PyFloat(v.value + 7);
  if (typeof v === "boolean") return !v;
  if (Array.isArray(v)) return [...v, v.length ? changed(v[0]) : "x"];
  if (v !== null && typeof v === "object") {
    const [k, x] = Object.entries(v)[0];
    return { ...v, [k]: changed(x) };
  }
  return "x";
}

Deno.test("every class's entries pass with their ground truth; a changed argument fails them", () => {
  let changes = 0, failing = 0;
  for (const cls of CLASSES) {
    const entries = generateEntries({ seed: 21, count: 8, split: "train", classes: [cls] }, newInstance);
    assert.deepEqual(new Set(entries.map((e) => e.category)), new Set(GENERATED_CATEGORIES), cls);
    for (const e of entries) {
      assert.deepEqual(e.involvedClasses, [cls]);
      const gt = e.groundTruth.map((t, i) => t.map((c) => parseGroundTruth(e, i, c)));
      assert.deepEqual(play(e, gt), { valid: true }, `${e.id} of ${cls}`);
      // Each argument of each call changed in turn: a ground truth that ignored its arguments would pass them all.
      let failed = 0, tried = 0;
      gt.forEach((turn, t) =>
        turn.forEach((c, j) => {
          for (const k of Object.keys(c.args)) {
            const turns = gt.map((x) => [...x]);
            turns[t][j] = { ...c, args: { ...c.args, [k]: changed(c.args[k]) } };
            tried++;
            if (!play(e, turns).valid) failed++;
          }
        })
      );
      assert.ok(tried === 0 || failed > 0, `${e.id} of ${cls}: none of ${tried} changed arguments fails it`);
      changes += tried;
      failing += failed;
    }
  }
  // A few arguments change neither a result nor the state (a login's password, a support message's text), as in
  // BFCL's classes; nearly all do.
  assert.ok(failing >= 0.85 * changes, `${failing} of ${changes} changed arguments fail`);
});

Deno.test("a generated set holds every class and long-context entries with larger states", () => {
  const entries = generateEntries({ seed: 2, count: 48, split: "train" }, newInstance);
  assert.deepEqual(new Set(entries.flatMap((e) => e.involvedClasses)), new Set(CLASS_NAMES));
  const long = entries.filter((e) => e.category === "long_context");
  assert.equal(long.length, 12);
  assert.ok(
    long.every((e) => e.longContext) && entries.every((e) => e.longContext === (e.category === "long_context")),
  );
  // The classes load BFCL's long-context extension for these entries (their state says so where BFCL's does).
  for (const e of long) {
    for (const [cls, inst] of newInstances(e, newInstance).byClass) {
      const state = inst.state();
      if ("long_context" in state) assert.equal(state.long_context, true, `${e.id} ${cls}`);
    }
  }
  // Per class, the long-context initial states are several times the others' (many files, tickets, messages, ...).
  const size = (es: BfclEntry[], cls: string) => {
    const sizes = es.filter((e) => cls in e.initialConfig).map((e) => JSON.stringify(e.initialConfig[cls]).length);
    return sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
  };
  const more = generateEntries({ seed: 3, count: 160, split: "train" }, newInstance);
  const longOnes = more.filter((e) => e.longContext), others = more.filter((e) => !e.longContext);
  for (const cls of ["GorillaFileSystem", "MessageAPI", "TicketAPI", "TwitterAPI", "TradingBot", "TravelAPI"]) {
    assert.ok(size(longOnes, cls) > 4 * size(others, cls), `${cls}: ${size(longOnes, cls)} vs ${size(others, cls)}`);
  }
  // And their results are long: some call's result runs past 3,000 characters.
  const longest = Math.max(...longOnes.map((e) => {
    const inst = newInstances(e, newInstance);
    return Math.max(
      ...e.groundTruth.flatMap((t, i) => t.map((c) => executeCall(inst, parseGroundTruth(e, i, c)).length)),
    );
  }));
  assert.ok(longest > 3000, `longest result ${longest}`);
});

Deno.test("generation is deterministic per seed, and the class list is a set", () => {
  const options = { seed: 9, count: 16, split: "test" as const };
  const a = generateEntries(options, newInstance);
  assert.deepEqual(generateEntries({ ...options, classes: [...CLASS_NAMES].reverse() }, newInstance), a);
  assert.deepEqual(JSON.stringify(generateEntries(options, newInstance)), JSON.stringify(a));
  assert.throws(() => generateEntries({ ...options, categories: ["composite"] }, newInstance), /categories/);
});

Deno.test("the original four classes and three categories draw what they drew before the other classes had worlds", async () => {
  // `deno task train bfcl`'s set (configs/bfcl_single.yaml): the SHA-256 of its 400 train and 100 held-out entries as
  // JSON, as the generator of commit 0433108 (four worlds, three categories) wrote them.
  const options = {
    seed: 0,
    classes: ["GorillaFileSystem", "MathAPI", "TwitterAPI", "TicketAPI"],
    categories: ["base", "miss_param", "miss_func"],
  };
  const train = generateEntries({ ...options, count: 400, split: "train" }, newInstance);
  const test = generateEntries({ ...options, count: 100, split: "test" }, newInstance);
  const bytes = new TextEncoder().encode(JSON.stringify([train, test]));
  const hex = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
  assert.equal(hex, "72f883a77be814b4e0195d00f279853bb3e1b247dbbfc7efc18e7fe39154ff30");
});

Deno.test("the generated tool documents are BFCL's functions and parameters, and cover every call", () => {
  for (const [cls, docs] of Object.entries(GENERATED_DOCS)) {
    const bfcl = new Map(functionDocs(cls).map((d) => [d.name, d]));
    for (const d of docs) {
      const theirs = bfcl.get(d.name);
      assert.ok(theirs, `${cls}: ${d.name} is not one of BFCL's functions`);
      const params = Object.keys(theirs.parameters.properties);
      for (const p of Object.keys(d.parameters.properties)) assert.ok(params.includes(p), `${cls}.${d.name}: ${p}`);
      // What BFCL requires, the document requires or lists.
      for (const p of theirs.parameters.required ?? []) {
        assert.ok(p in d.parameters.properties, `${cls}.${d.name} lacks BFCL's required ${p}`);
      }
    }
  }
  const documented = new Set(Object.values(GENERATED_DOCS).flat().map((d) => d.name));
  for (const e of generateEntries({ seed: 4, count: 80, split: "train" }, newInstance)) {
    for (const c of e.groundTruth.flat()) assert.ok(documented.has(c.split("(")[0]), `${e.id}: ${c} has no document`);
  }
});
