import assert from "node:assert/strict";
import { formatItemIds, parseItemIds, ranges } from "../../../src/task/splits.ts";
import { ONLY_ONE_ACTION, parseTextCraftAction, TEXTCRAFT_SPLITS } from "../../../tasks/textcraft/rules.ts";
import { textcraft } from "../../../tasks/textcraft/mod.ts";

Deno.test("TextCraft action extraction follows upstream's client rule", () => {
  const cases: [string, string][] = [
    ["Thought:\nI need logs.\n\nAction:\nget 1 oak logs", "get 1 oak logs"],
    ["Action: craft 4 oak_planks using 1 oak_logs.", "craft 4 oakplanks using 1 oaklogs"],
    [
      "Action:\n\n  craft 1 golden carrot using 8 gold nugget, 1 carrot  \nmore text",
      "craft 1 golden carrot using 8 gold nugget, 1 carrot",
    ],
    ["Action:   get   2\tdark oak   planks", "get 2dark oak planks"],
    ["I will just think.", ""],
    ["Action:", ""],
    ["Action: **inventory**", "inventory"],
    ["Action: Look", "inventory"],
    ["Action: look around", "look around"],
    ["action: get 1 dirt", ""],
    ["Action: get 1 dirt Action: get 2 dirt", "get 1 dirt Action get 2 dirt"],
  ];
  for (const [text, action] of cases) assert.deepEqual(parseTextCraftAction(text), { action }, JSON.stringify(text));
  assert.deepEqual(parseTextCraftAction("Action: get 1 dirt\nAction: inventory"), {
    reply: { observation: ONLY_ONE_ACTION, reward: 0, done: false },
  });
});

Deno.test("TextCraft task defaults: 30 rounds, success is a final reward of 1, prompt ends with a blank line", () => {
  assert.equal(textcraft.maxRounds, 30);
  assert.ok(textcraft.isSuccess(1));
  assert.ok(!textcraft.isSuccess(0));
  assert.ok(textcraft.prompt.user.endsWith("\n\n"));
  for (const s of ["get 1 lapis lazuli", "craft 1 blue dye using 1 lapis lazuli", "dark oak planks", "inventory"]) {
    assert.ok(textcraft.prompt.user.includes(s), s);
  }
  assert.ok(textcraft.prompt.user.includes('"Thought:\\nyour reasoning.\\n\\nAction:\\nyour next action"'));
});

Deno.test("item files are read as published, and malformed ones are SyntaxErrors naming the entry", () => {
  const text = '[{"item_id": "textcraft_12"}, {"item_id": "textcraft_0", "extra": 1}]';
  assert.deepEqual(parseItemIds(text, "textcraft"), [12, 0]);
  assert.deepEqual(parseItemIds(formatItemIds(TEXTCRAFT_SPLITS.test, "textcraft"), "textcraft"), TEXTCRAFT_SPLITS.test);
  assert.throws(() => parseItemIds('[{"item_id": "webshop_3"}]', "textcraft"), /entry 0 .*webshop_3/);
  assert.throws(() => parseItemIds('[{"item_id": "textcraft_x"}]', "textcraft"), SyntaxError);
  assert.throws(() => parseItemIds('{"item_id": "textcraft_1"}', "textcraft"), SyntaxError);
  assert.throws(() => parseItemIds("[", "textcraft"), /not JSON/);
  assert.deepEqual(ranges([3, 5], [9, 9]), [3, 4, 5, 9]);
});

Deno.test("the published TextCraft splits: 374 train, 100 test, disjoint", () => {
  assert.equal(TEXTCRAFT_SPLITS.train.length, 374);
  assert.equal(TEXTCRAFT_SPLITS.test.length, 100);
  const test = new Set(TEXTCRAFT_SPLITS.test);
  assert.ok(TEXTCRAFT_SPLITS.train.every((i) => !test.has(i)));
  assert.deepEqual([TEXTCRAFT_SPLITS.train[0], TEXTCRAFT_SPLITS.train.at(-1)], [31, 537]);
});
