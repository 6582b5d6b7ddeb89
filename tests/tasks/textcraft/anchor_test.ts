// TextCraft's anchors (tasks/textcraft/anchor.ts): the inventory replayed from the turns is the game's own, step by
// step, on oracle plans with refusals, repeats and inventory checks mixed in; positions with the same observation but
// different inventories differ; the same inventory reached by different paths is one anchor.
import assert from "node:assert/strict";
import { stateAnchor } from "../../../src/task/anchor.ts";
import { Rng } from "../../../src/util/random.ts";
import { replayInventory, textCraftAnchor } from "../../../tasks/textcraft/anchor.ts";
import { TextCraftGame } from "../../../tasks/textcraft/game/game.ts";
import { idToName } from "../../../tasks/textcraft/game/python.ts";
import { textcraft } from "../../../tasks/textcraft/mod.ts";
import { solveTask } from "../../../tasks/textcraft/oracle.ts";
import { tree } from "../../env/helpers.ts";

type Turn = { action: string | null; observation: string };

/** The game's inventory as its `inventory` command lists it (`[oak planks] (4) ...`), by shown name. */
function listed(game: TextCraftGame): Map<string, bigint> {
  const text = game.step("inventory").observation;
  return new Map([...text.matchAll(/\[([^\]]+)\] \(([0-9]+)\)/g)].map((m) => [m[1], BigInt(m[2])]));
}

const shown = (held: Map<string, bigint>) => new Map([...held].map(([id, n]) => [idToName(id), n]));

const seen = (turns: Turn[]) => ({ firstObservation: "", turns, observation: turns.at(-1)?.observation ?? "" });

Deno.test("the replayed inventory is the game's after every step, refusals and repeats included", () => {
  const rng = new Rng(57);
  for (const task of [0, 141, 143, 150, 160, 300, 421, 440, 533]) {
    const game = new TextCraftGame(tree);
    game.reset(BigInt(task));
    const plan = solveTask(tree, task).actions;
    const goal = plan.at(-1)!.split(" using ")[0].replace(/^craft [0-9]+ /, "");
    const turns: Turn[] = [];
    for (const action of plan) {
      // Before each planned action, sometimes an action the game refuses (a craft short of inputs, a get of a crafted
      // item, nonsense), sometimes twice, or an inventory check: none changes the inventory.
      const noise = [`craft 1 ${goal} using 64 stick`, `get 1 ${goal}`, "jump", "inventory"];
      for (let k = rng.int(3); k > 0; k--) {
        const a = noise[rng.int(noise.length)];
        turns.push({ action: a, observation: game.step(a).observation });
      }
      if (rng.int(4) === 0) turns.push({ action: null, observation: "Error: Only one 'Action' is allowed" });
      turns.push({ action, observation: game.step(action).observation });
      assert.deepEqual(shown(replayInventory(turns)), listed(game), `task ${task} after ${turns.length} turns`);
    }
  }
});

Deno.test("the same observation over different inventories is two anchors; the observation alone would be one", () => {
  const once = [{ action: "get 1 acacia logs", observation: "Got 1 acacia logs" }];
  const twice = [...once, ...once];
  assert.equal(textCraftAnchor(seen(once)), "inventory minecraft:acacia_logs=1");
  assert.equal(textCraftAnchor(seen(twice)), "inventory minecraft:acacia_logs=2");
  assert.notEqual(stateAnchor(textcraft, seen(once)), stateAnchor(textcraft, seen(twice)));
  assert.equal(stateAnchor({}, seen(once)), stateAnchor({}, seen(twice)), "the text is the same");
});

Deno.test("the same inventory by different paths is one anchor, whatever the order or the refusals between", () => {
  const game = (actions: string[]) => {
    const g = new TextCraftGame(tree);
    g.reset(143n);
    return actions.map((action) => ({ action, observation: g.step(action).observation }));
  };
  const planks = "craft 4 acacia planks using 1 acacia logs";
  const first = game(["get 2 acacia logs", planks, "get 1 stick", planks]);
  const second = game(["get 1 acacia logs", "inventory", planks, "get 1 acacia logs", planks, planks]);
  assert.deepEqual(shown(replayInventory(first)), new Map([["acacia planks", 8n]]));
  assert.equal(textCraftAnchor(seen(first)), textCraftAnchor(seen(second)));
  assert.equal(stateAnchor(textcraft, seen(first)), stateAnchor(textcraft, seen(second)));
  // Crafting takes the inputs the action names: 2 planks into 4 sticks leaves 6 planks.
  const sticks = game(["get 2 acacia logs", planks, planks, "craft 4 stick using 2 acacia planks"]);
  assert.equal(textCraftAnchor(seen(sticks)), "inventory minecraft:acacia_planks=6 minecraft:stick=4");
  assert.equal(textCraftAnchor(seen([])), "inventory", "the start: nothing held");
});
