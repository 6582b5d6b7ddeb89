import assert from "node:assert/strict";
import { formatFacts, rebuildFacts } from "../../../../tasks/textcraft/game/facts_gen.ts";
import { TextCraftGame } from "../../../../tasks/textcraft/game/game.ts";
import { CraftingTree } from "../../../../tasks/textcraft/game/tree.ts";
import { DEPTH_RANGES, TEXTCRAFT_SPLITS } from "../../../../tasks/textcraft/rules.ts";
import { tree } from "../../../env/helpers.ts";

Deno.test("recipes.tsv is exactly what the generator rebuilds from minecraft-data", async () => {
  const checkedIn = await Deno.readTextFile(new URL("../../../../tasks/textcraft/game/recipes.tsv", import.meta.url));
  const facts = rebuildFacts();
  assert.equal(facts.length, 635, "shaped 491 + shapeless 144, the stale sugar copy included");
  assert.equal(new Set(facts.map((f) => f.output)).size, 562);
  assert.equal(facts.filter((f) => f.group !== null).length, 319);
  assert.ok(
    formatFacts(facts) === checkedIn,
    "recipes.tsv is stale: run deno run -A tasks/textcraft/game/facts_gen.ts",
  );
});

Deno.test("the tree has upstream's numbers: 544 goals, depths 140/280/113/11, 613 recipes, 132 base items", () => {
  const histogram = [0, 0, 0, 0];
  for (const g of tree.goals) histogram[g.depth - 1]++;
  assert.equal(tree.goals.length, 544);
  assert.deepEqual(histogram, [140, 280, 113, 11]);
  let registered = 0;
  let multi = 0;
  for (const list of tree.itemRecipes.values()) {
    registered += list.length;
    if (list.length > 1) multi++;
  }
  assert.equal(registered, 613);
  assert.equal(multi, 59);
  assert.equal(tree.items.size, 676);
  assert.equal([...tree.items].filter((i) => !tree.isCraftable(i) && !tree.tags.has(i)).length, 132);
  assert.equal(tree.tags.size, 23);
  assert.deepEqual(tree.goals.slice(533).map((g) => g.id.slice(10)), [
    "cyan_banner",
    "gray_banner",
    "hopper_minecart",
    "lectern",
    "lime_banner",
    "lodestone",
    "polished_andesite_slab",
    "polished_andesite_stairs",
    "polished_granite_slab",
    "polished_granite_stairs",
    "purple_banner",
  ]);
  // Only planks and wool stay tags on the input side; wool's members are the 15 dyed wools.
  const inputTags = new Set([...tree.itemRecipes.values()].flat().flatMap((r) => r.inputs.filter((x) => x.tag)));
  assert.deepEqual([...new Set([...inputTags].map((x) => x.id))].sort(), ["minecraft:planks", "minecraft:wool"]);
  assert.equal([...tree.tagOf.values()].filter((t) => t === "minecraft:wool").length, 15);
  assert.ok(!tree.tagOf.has("minecraft:white_wool"));
});

Deno.test("the three cycles keep gold ingot from nuggets, iron nuggets from an ingot, honey bottles from a block", () => {
  const texts = (id: string) => (tree.itemRecipes.get(`minecraft:${id}`) ?? []).map((r) => r.text);
  assert.deepEqual(texts("gold_ingot"), ["craft 1 gold ingot using 9 gold nugget"]);
  assert.deepEqual(texts("gold_nugget"), []);
  assert.deepEqual(texts("iron_nugget"), ["craft 9 iron nugget using 1 iron ingot"]);
  assert.deepEqual(texts("iron_ingot"), []);
  assert.deepEqual(texts("honey_bottle"), ["craft 4 honey bottle using 1 honey block, 4 glass bottle"]);
  assert.deepEqual(texts("honey_block"), []);
  assert.deepEqual(texts("iron_pickaxe"), ["craft 1 iron pickaxe using 2 stick, 3 iron ingot"]);
  assert.deepEqual(texts("campfire"), ["craft 1 campfire using 3 logs, 3 stick, 1 coals"]);
});

Deno.test("the splits follow the depth boundaries: test 31/41/25/3, train 109/221/43/1", () => {
  const byDepth = (ids: readonly number[]) =>
    DEPTH_RANGES.map(([a, b]) =>
      ids.filter((i) => i >= a && i <= b && tree.goals[i].depth === tree.goals[a].depth).length
    );
  assert.deepEqual(byDepth(TEXTCRAFT_SPLITS.test), [31, 41, 25, 3]);
  assert.deepEqual(byDepth(TEXTCRAFT_SPLITS.train), [109, 221, 43, 1]);
  assert.deepEqual(DEPTH_RANGES.map(([a, b]) => [tree.goals[a].depth, tree.goals[b].depth]), [[1, 1], [2, 2], [3, 3], [
    4,
    4,
  ]]);
  assert.equal(new Set([...TEXTCRAFT_SPLITS.train, ...TEXTCRAFT_SPLITS.test]).size, 474);
});

Deno.test("command lists hold every needed recipe plus at most 10 distractors, 1 to 72 lines", () => {
  const game = new TextCraftGame(tree);
  const sizes: number[] = [];
  for (let i = 0; i < tree.goals.length; i++) {
    const lines = game.reset(BigInt(i)).split("\n\nGoal: ")[0].split("\n").slice(1);
    const needed = new Set(tree.traverse(tree.goals[i].id).map((r) => r.text));
    assert.equal(new Set(lines).size, lines.length);
    for (const n of needed) assert.ok(lines.includes(n), `task ${i} lacks "${n}"`);
    assert.ok(lines.length - needed.size <= 10);
    sizes.push(lines.length);
  }
  assert.equal(Math.min(...sizes), 1);
  assert.equal(Math.max(...sizes), 72);
});

Deno.test("a malformed facts line is a SyntaxError naming the line", () => {
  assert.throws(() => new CraftingTree("stick\t4\tsticks\t2 planks!\n"), SyntaxError);
  assert.throws(() => new CraftingTree("# header\nstick\tfour\t-\t2 stick\n"), /line 2/);
});
