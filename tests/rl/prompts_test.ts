import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { runTraining } from "../../src/train/run.ts";
import {
  byCategory,
  type DataPosition,
  nextPrompts,
  recordSignal,
  signalPrompts,
  signalWeight,
  withWorlds,
} from "../../src/rl/prompts.ts";

const indices = Array.from({ length: 40 }, (_, i) => i);
/** Tasks 0-9 are "a", 10-39 "b". */
const category = (i: number) => (i < 10 ? "a" : "b");

Deno.test("the uniform walk visits every prompt once per epoch, then reshuffles", () => {
  const pos = { epoch: 0, offset: 0 };
  const first = [...nextPrompts(indices, 16, 3, pos), ...nextPrompts(indices, 24, 3, pos)];
  assert.deepEqual([...first].sort((x, y) => x - y), indices);
  assert.deepEqual(pos, { epoch: 1, offset: 0 });
  const second = nextPrompts(indices, 40, 3, pos);
  assert.notDeepEqual(second, first);
  assert.deepEqual([...second].sort((x, y) => x - y), indices);
});

Deno.test("signal weights: a prior of one signal in two groups, the floor below", () => {
  assert.equal(signalWeight(undefined, 0.05), 0.5);
  assert.equal(signalWeight({ epoch: 0, offset: 0, groups: 8, signal: 5 }, 0.05), 0.6);
  assert.equal(signalWeight({ epoch: 0, offset: 0, groups: 100, signal: 0 }, 0.05), 0.05);
});

Deno.test("signal counts: a group counts as signal only when its rewards differ", () => {
  const pos: DataPosition = { epoch: 0, offset: 0 };
  recordSignal(pos, [
    { task: 1, rewards: [0, 1, 0] },
    { task: 2, rewards: [1, 1, 1] },
    { task: 20, rewards: [0, 0] },
    { task: 21, rewards: [] },
  ], category);
  assert.deepEqual(pos.categories, {
    a: { epoch: 0, offset: 0, groups: 2, signal: 1 },
    b: { epoch: 0, offset: 0, groups: 1, signal: 0 },
  });
});

/** A data position whose categories a and b have played `groups` groups, `signal` of them with signal. */
function countedAt(a: { groups: number; signal: number }, b: { groups: number; signal: number }): DataPosition {
  return {
    epoch: 0,
    offset: 0,
    categories: { a: { epoch: 0, offset: 0, ...a }, b: { epoch: 0, offset: 0, ...b } },
  };
}

/** Share of category `c` among `steps` steps of 8 prompts drawn from `pos`. */
function shareOf(
  c: string,
  groups: ReturnType<typeof byCategory>,
  pos: DataPosition,
  steps: number,
  balance?: "prompt" | "category",
): number {
  const picks = Array.from({ length: steps }, (_, s) => signalPrompts(groups, 8, 1, s + 1, 0.05, pos, balance)).flat();
  return picks.filter((i) => category(i) === c).length / picks.length;
}

Deno.test("signal sampling follows each category's share of signal, keeps the floor, and replays", () => {
  const groups = byCategory(indices, category);
  assert.deepEqual([...groups.keys()], ["a", "b"]);
  // Before any counts, every prompt weighs the same: "b" holds 3/4 of the split.
  const fresh: DataPosition = { epoch: 0, offset: 0 };
  const drawn = Array.from({ length: 100 }, (_, s) => signalPrompts(groups, 8, 1, s + 1, 0.05, fresh)).flat();
  const shareB = drawn.filter((i) => category(i) === "b").length / drawn.length;
  assert.ok(shareB > 0.68 && shareB < 0.82, `share of b before counts ${shareB}`);
  // "a" always differed, "b" never: a gets 10 x (41/42), b 30 x 0.05.
  const counted = countedAt({ groups: 40, signal: 40 }, { groups: 400, signal: 0 });
  const replay = structuredClone(counted);
  const picks = Array.from({ length: 200 }, (_, s) => signalPrompts(groups, 8, 1, s + 1, 0.05, counted)).flat();
  const expectB = (30 * 0.05) / (30 * 0.05 + 10 * (41 / 42));
  const b = picks.filter((i) => category(i) === "b").length / picks.length;
  assert.ok(Math.abs(b - expectB) < 0.03, `share of b ${b}, expected ${expectB}`);
  // Within a category the walk covers every prompt before repeating one.
  const firstA = picks.filter((i) => category(i) === "a").slice(0, 10);
  assert.deepEqual([...firstA].sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // The same state and step give the same prompts (a resumed run draws what it would have drawn).
  assert.deepEqual(signalPrompts(groups, 8, 1, 1, 0.05, replay), picks.slice(0, 8));
});

Deno.test("signal sampling balanced by category draws a small category as often as a large one of equal signal", () => {
  const groups = byCategory(indices, category);
  // Before any counts both categories weigh 1/2, whatever their sizes (a: 10 prompts, b: 30).
  const fresh = shareOf("a", groups, { epoch: 0, offset: 0 }, 100, "category");
  assert.ok(fresh > 0.43 && fresh < 0.57, `share of a before counts ${fresh}`);
  // a: 9 signals in 18 groups (10/20), b: 1 in 38 (2/40 = 0.05): a's chance is 0.5 / (0.5 + 0.05), not 10 x 0.5
  // against 30 x 0.05 as by prompt (the default), checked on the same counts.
  const counts = [{ groups: 18, signal: 9 }, { groups: 38, signal: 1 }] as const;
  const a = shareOf("a", groups, countedAt(...counts), 200, "category");
  assert.ok(Math.abs(a - 0.5 / 0.55) < 0.03, `share of a ${a}, expected ${0.5 / 0.55}`);
  const byPrompt = shareOf("a", groups, countedAt(...counts), 200);
  assert.ok(Math.abs(byPrompt - 5 / 6.5) < 0.03, `share of a by prompt ${byPrompt}, expected ${5 / 6.5}`);
});

Deno.test("signal sampling for a task without categories stops before the run starts, naming the key", async () => {
  const dir = await Deno.makeTempDir();
  const config = resolveConfig({ text: "task: babyai\n", name: "test" }, [
    "data.prompt_sampling.type=signal",
    "env.urls=[http://127.0.0.1:9]",
  ]);
  const quiet = { bar: () => ({ tick() {}, done() {} }), line() {} };
  await assert.rejects(
    runTraining({ config, runDir: `${dir}/run`, resume: false, reporter: quiet, stopRequested: () => false }),
    /data\.prompt_sampling\.type=signal draws prompts by task category, and babyai has none; use .*=uniform/,
  );
  // Nothing is left behind by a run that never started.
  await assert.rejects(Deno.stat(`${dir}/run`), Deno.errors.NotFound);
});

Deno.test("synthetic worlds among a step's prompts: their count, spread evenly, never repeated, a function of the step", () => {
  const first = 1_000_000;
  // None asked: the split's prompts exactly as drawn.
  assert.deepEqual(withWorlds([5, 9, 2, 7], { worlds: 0, step: 3, first }), [5, 9, 2, 7]);
  // 2 of 8: one in each half of the batch, the split's six in their order around them.
  assert.deepEqual(withWorlds([1, 2, 3, 4, 5, 6], { worlds: 2, step: 1, first }), [1, 2, first, 3, 4, 5, first + 1, 6]);
  assert.deepEqual(withWorlds([1, 2, 3, 4, 5, 6], { worlds: 2, step: 4, first }), [
    1,
    2,
    first + 6,
    3,
    4,
    5,
    first + 7,
    6,
  ]);
  // Every world of a run is new; each step holds exactly its count; all worlds when the split gives none.
  const seen = new Set<number>();
  for (let step = 1; step <= 50; step++) {
    const p = withWorlds([10, 11, 12, 13, 14], { worlds: 3, step, first });
    const worlds = p.filter((i) => i >= first);
    assert.equal(worlds.length, 3);
    assert.deepEqual(p.filter((i) => i < first), [10, 11, 12, 13, 14]);
    for (const w of worlds) assert.ok(!seen.has(w), `world ${w} repeated`), seen.add(w);
    // Each half of the batch holds at least one world (spread, not bunched at one end).
    assert.ok(p.slice(0, 4).some((i) => i >= first) && p.slice(4).some((i) => i >= first), `${p}`);
  }
  assert.deepEqual(withWorlds([], { worlds: 4, step: 2, first }), [first + 4, first + 5, first + 6, first + 7]);
});
