import assert from "node:assert/strict";
import { post, taskOf, withTextCraft } from "../../../env/helpers.ts";

/** Plays `steps` on a fresh environment reset to the goal's task; returns every answer. */
async function play(url: string, goal: string, actions: string[]) {
  const { body: created } = await post(`${url}/create`, {});
  const id = (created as { id: number }).id;
  await post(`${url}/reset`, { id, data_idx: taskOf(goal) });
  const out = [];
  for (const action of actions) out.push((await post(`${url}/step`, { id, action })).body);
  return out as { observation: string; reward: number; done: boolean }[];
}

Deno.test("the rule table of section 3.4 and the tag examples of 3.5, byte for byte over HTTP", async () => {
  await withTextCraft(async ({ url }) => {
    const cases: [string, string, number?, boolean?][] = [
      ["inventory", "Inventory: You are not carrying anything."],
      ["get 1 oak logs", "Got 1 oak logs"],
      ["craft 4 oak planks using 1 oak logs", "Crafted 4 minecraft:oak_planks"],
      ["craft 4 stick using 2 planks", "Could not find enough items to craft minecraft:stick"],
      ["get 2 oak planks", "Could not find oak planks"],
      ["get 1 sticks", "Could not find sticks"],
      ["get 1 wooden slabs", "Got 1 wooden slabs"],
      ["inventory", "Inventory: [oak planks] (4) [wooden slabs] (1) "],
      ["craft 4 stick using 2 oak planks", "Crafted 4 minecraft:stick", 1, true],
      ["inventory please", "Inventory: [oak planks] (2) [wooden slabs] (1) [stick] (4) "],
      ["craft 4 stick using 2 oak planks", "Crafted 4 minecraft:stick", 1, true],
      ["craft 1 bowl using planks", "Wrong item format: planks"],
      ["craft 1 bowl using 3 oak planks,  x", "Wrong item format: x"],
      ["craft 4 planks using 5 dirt", "Could not find enough items to craft None"],
      ["get 2 oak logs", "Got 2 oak logs"],
      [
        "craft 4 oak planks using 2 oak logs",
        "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, " +
        "item_id='minecraft:oak_planks'), count=4)",
      ],
      [
        "craft planks using 1 oak logs",
        "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag='minecraft:planks', " +
        "item_id=None), count=1)",
      ],
      ["craft oak planks using 1 oak logs", "Crafted 4 minecraft:oak_planks"],
      ["", "Could not execute "],
      ["Get 1 dirt", "Could not execute Get 1 dirt"],
      [" get 1 dirt", "Could not execute  get 1 dirt"],
      ["get 1 ", "Could not find "],
      ["get 0 dirt", "Got 0 dirt"],
      ["get 007 dirt", "Got 7 dirt"],
      ["get 99999999999999999999 dirt", "Got 99999999999999999999 dirt"],
      ["get 1 oak log", "Got 1 oak log"],
      [
        "craft 4 oak planks using 1 oak log",
        "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, " +
        "item_id='minecraft:oak_planks'), count=4)",
      ],
      [
        "craft 1 it's using 1 oak logs",
        `Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, item_id="minecraft:it's"), ` +
        "count=1)",
      ],
      [
        "craft 1 a using b using 1 oak logs",
        "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, " +
        "item_id='minecraft:a_using_b'), count=1)",
      ],
    ];
    const answers = await play(url, "minecraft:stick", cases.map((c) => c[0]));
    for (const [i, [action, observation, reward = 0, done = false]] of cases.entries()) {
      assert.deepEqual(answers[i], { observation, reward, done }, `action ${JSON.stringify(action)}`);
    }
  });
});

Deno.test("mixed plank kinds do not satisfy a tag input, and the inventory keeps insertion order", async () => {
  await withTextCraft(async ({ url }) => {
    const answers = await play(url, "minecraft:crafting_table", [
      "get 1 oak logs",
      "get 1 birch logs",
      "craft 4 oak planks using 1 oak logs",
      "craft 4 birch planks using 1 birch logs",
      "craft 1 crafting table using 2 oak planks, 2 birch planks",
      "craft 1 crafting table using 4 birch planks",
      "inventory",
    ]);
    assert.equal(
      answers[4].observation,
      "Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, " +
        "item_id='minecraft:crafting_table'), count=1)",
    );
    assert.deepEqual(answers[5], { observation: "Crafted 1 minecraft:crafting_table", reward: 1, done: true });
    assert.equal(answers[6].observation, "Inventory: [oak planks] (4) [crafting table] (1) ");
  });
});

Deno.test("a command naming an item with an ingredient's inputs crafts that ingredient, as a warmed-up upstream does", async () => {
  await withTextCraft(async ({ url }) => {
    const answers = await play(url, "minecraft:stick", [
      "get 1 oak logs",
      "craft 4 stick using 1 oak logs",
      "craft 1 dirt using 4 oak planks",
    ]);
    assert.deepEqual(answers[1], { observation: "Crafted 4 minecraft:oak_planks", reward: 0, done: false });
    // dirt has no recipe at all, so nothing below it can match.
    assert.match(answers[2].observation, /^Could not find a valid recipe for .*'minecraft:dirt'/);
  });
});
