// The pieces of ETO's rounds that need no GPU: a rejected episode cut after its first turns (ETO's extra turns), the
// optimizer steps of a round (epochs of shuffled pairs, a fractional last one), and expert files read as AgentGym
// writes them (the lower-rewarded of a task's episodes kept, as make_dpo_dataset.py keeps it).
import assert from "node:assert/strict";
import { dpoPlan, firstTurns } from "../../src/train/dpo_phase.ts";
import { parseExperts } from "../../src/train/preferences.ts";

Deno.test("firstTurns cuts a sequence after its first n agent turns, keeping what came before", () => {
  // Prompt of 2, then turn 1 (2 tokens), an observation (1), turn 2 (1), an observation (2), turn 3 (2).
  const s = { ids: [9, 9, 1, 1, 0, 2, 0, 0, 3, 3], promptLength: 2, mask: [1, 1, 0, 1, 0, 0, 1, 1] };
  assert.deepEqual(firstTurns(s, 1), { ids: [9, 9, 1, 1], promptLength: 2, mask: [1, 1] });
  assert.deepEqual(firstTurns(s, 2), { ids: [9, 9, 1, 1, 0, 2], promptLength: 2, mask: [1, 1, 0, 1] });
  assert.deepEqual(firstTurns(s, 3), s);
  assert.equal(firstTurns(s, Infinity), s);
  const ignored = { ...s, ignore: [0, 0, 0, 0, 0, 0, 1, 1] };
  assert.deepEqual(firstTurns(ignored, 2).ignore, [0, 0, 0, 0]);
});

Deno.test("dpoPlan: every pair once an epoch, shuffled per round and epoch, a fractional epoch cut short", () => {
  const plan = dpoPlan(10, { epochs: 2.5, batchPairs: 4, seed: 1, round: 1 });
  assert.deepEqual(plan.map((s) => s.pairs.length), [4, 4, 2, 4, 4, 2, 4, 1]);
  for (const e of [0, 1]) {
    const seen = plan.filter((s) => s.epoch === e).flatMap((s) => s.pairs).sort((a, b) => a - b);
    assert.deepEqual(seen, [...Array(10).keys()]);
  }
  const order = (round: number) => dpoPlan(10, { epochs: 1, batchPairs: 10, seed: 1, round })[0].pairs.join();
  assert.equal(order(1), order(1));
  assert.notEqual(order(1), order(2));
  assert.deepEqual(dpoPlan(0, { epochs: 3, batchPairs: 8, seed: 1, round: 1 }), []);
});

Deno.test("expert files: item ids to task indices, rewards (1 when absent), a task's lower-rewarded episode", () => {
  const conv = (action: string) => [
    { from: "human", value: "Craft things." },
    { from: "gpt", value: "OK." },
    { from: "human", value: "Goal: craft stick." },
    { from: "gpt", value: action, loss: true },
  ];
  const text = [
    { item_id: "textcraft_12", conversations: conv("Action: a"), reward: 1 },
    { item_id: "textcraft_3", conversations: conv("Action: b") },
    { item_id: "textcraft_12", conversations: conv("Action: c"), reward: 0.5 },
  ].map((e) => JSON.stringify(e)).join("\n");
  const experts = parseExperts(text, "experts.jsonl", "textcraft");
  assert.deepEqual([...experts.keys()].sort((a, b) => a - b), [3, 12]);
  assert.equal(experts.get(3)!.reward, 1);
  assert.deepEqual(experts.get(12), {
    opening: { user: "Craft things.", assistant: "OK.", observation: "Goal: craft stick." },
    turns: [{ role: "assistant", content: "Action: c", loss: true }],
    reward: 0.5,
  });
  assert.throws(
    () => parseExperts('{"item_id": "webshop_1", "conversations": []}', "e.jsonl", "textcraft"),
    /e\.jsonl line 1: field "item_id" is "webshop_1"; expected "textcraft_<index>"/,
  );
  assert.throws(
    () =>
      parseExperts(JSON.stringify({ item_id: "textcraft_1", conversations: conv("x").slice(0, 3) }), "e", "textcraft"),
    /line 1: field "conversations" must open with instructions/,
  );
});
