import assert from "node:assert/strict";
import { oracleReply, recipeLines } from "../../../tasks/textcraft/formats.ts";

Deno.test("recipe lines: a craft's own line (tags match kinds), a get's first later consumer, else none", () => {
  const opening = [
    "Crafting commands:",
    "craft 1 lantern using 2 planks, 1 torch",
    "craft 4 oak planks using 1 oak logs",
    "craft 1 lantern using 3 planks, 1 torch",
    "craft 1 chest using 8 planks",
    "",
    "Goal: craft lantern.",
  ].join("\n");
  const actions = [
    "get 1 oak logs",
    "craft 4 oak planks using 1 oak logs",
    "get 1 torch",
    "craft 1 lantern using 3 oak planks, 1 torch",
    "inventory",
    "get 1 stone",
  ];
  assert.deepEqual(recipeLines(opening, actions), [
    "craft 4 oak planks using 1 oak logs",
    "craft 4 oak planks using 1 oak logs",
    // Counts pick between the two lantern lines.
    "craft 1 lantern using 3 planks, 1 torch",
    "craft 1 lantern using 3 planks, 1 torch",
    undefined,
    undefined,
  ]);
  const line = "craft 1 lantern using 3 planks, 1 torch";
  assert.equal(oracleReply("get 1 torch", "recipe", line), `Thought: ${line}\nAction: get 1 torch`);
  assert.equal(
    oracleReply("get 1 torch", "tail", line),
    "Thought: lantern using 3 planks, 1 torch\nAction: get 1 torch",
  );
  for (const f of ["recipe", "tail"] as const) assert.equal(oracleReply("inventory", f), "Action: inventory");
  assert.equal(oracleReply("inventory", "action", line), "Action: inventory");
});
