// WebShop's own files read from a data directory in their published layout (items_shuffle_1000.json,
// items_ins_v2_1000.json, items_human_ins.json): the loader's rules (skipped asins, price strings, option values),
// human goals when that file is there (caps and order as goal.py and random.seed(233) give them), synthetic ones
// otherwise or when asked, WebShop's index splits, clear errors for missing or malformed files; and the generated
// catalogue's splits sharing no goal and no product.
import assert from "node:assert/strict";
import { parsePricing } from "../../../tasks/webshop/catalog.ts";
import { dataDirSource, generatedSource } from "../../../tasks/webshop/data.ts";
import { ATTRS, RAW } from "./fixture.ts";

const HUMAN = {
  B00SHOE001: [
    {
      instruction: "i want navy running shoes.",
      instruction_attributes: ["rubber sole"],
      instruction_options: ["navy"],
    },
    { instruction: "shoes please", instruction_attributes: [], instruction_options: [] },
  ],
  B00WATCH04: [{ instruction: "a sport watch", instruction_attributes: ["water resistant"], instruction_options: [] }],
};

async function dataDir(files: Record<string, unknown>): Promise<string> {
  const dir = await Deno.makeTempDir();
  for (const [name, value] of Object.entries(files)) {
    await Deno.writeTextFile(`${dir}/${name}`, typeof value === "string" ? value : JSON.stringify(value));
  }
  return dir;
}

Deno.test("a data directory's human goals: one per instruction with attributes, caps and order as upstream's", async () => {
  const dir = await dataDir({
    "items_shuffle_1000.json": RAW,
    "items_ins_v2_1000.json": ATTRS,
    "items_human_ins.json": HUMAN,
  });
  try {
    const { world, tasks } = await dataDirSource(dir);
    assert.equal(world.goalKind, "human");
    assert.deepEqual(world.catalog.products.map((p) => p.asin), [
      "B00SHOE001",
      "B00SHOE002",
      "B00SOCK003",
      "B00WATCH04",
    ]);
    // python3 -c 'import random; random.seed(233); print(sorted(random.sample([50.,60.,70.,80.],2)),
    //   "watch at $100 ->", sorted(random.sample([110.,120.,130.,140.],2))); g=[0,1]; random.seed(233);
    //   random.shuffle(g); print(g)'  ->  [60.0, 70.0] watch at $100 -> [120.0, 140.0] / [1, 0]
    assert.deepEqual(world.goals.map((g) => [g.asin, g.instructionText, g.priceUpper]), [
      ["B00WATCH04", "a sport watch, and price lower than 140.00 dollars", 140],
      ["B00SHOE001", "i want navy running shoes, and price lower than 70.00 dollars", 70],
    ]);
    assert.deepEqual(world.goals[1].goalOptions, ["navy"]);
    assert.deepEqual(tasks.splits, { test: [0, 1], eval: [], train: [] });
    assert.match(tasks.about!, /4 products, 2 human goals/);
    // Asked for synthetic goals, the same directory serves the attribute file's instructions.
    const synthetic = await dataDirSource(dir, "synthetic");
    assert.equal(synthetic.world.goals.length, 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without items_human_ins.json the goals are synthetic; missing and malformed files are named", async () => {
  const dir = await dataDir({ "items_shuffle.json": RAW, "items_ins_v2.json": ATTRS });
  try {
    const { world } = await dataDirSource(dir);
    assert.equal(world.goalKind, "synthetic");
    assert.equal(world.goals.length, 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const empty = await dataDir({});
  try {
    await assert.rejects(dataDirSource(empty), /holds neither items_shuffle_1000.json nor items_shuffle.json/);
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
  const broken = await dataDir({ "items_shuffle_1000.json": "[{", "items_ins_v2_1000.json": ATTRS });
  try {
    await assert.rejects(dataDirSource(broken), /items_shuffle_1000.json is not JSON/);
  } finally {
    await Deno.remove(broken, { recursive: true });
  }
});

Deno.test("price strings as the loader reads them", () => {
  assert.deepEqual(parsePricing("$12.99", "x"), [12.99]);
  assert.deepEqual(parsePricing("$10.99 - $15.49", "x"), [10.99, 15.49]);
  assert.deepEqual(parsePricing("$1,299.00", "x"), [1299]);
  assert.deepEqual(parsePricing("", "x"), [100]);
  assert.deepEqual(parsePricing(null, "x"), [100]);
  assert.throws(() => parsePricing("$free", "B0X"), /Product B0X: the price "\$free"/);
});

Deno.test("the generated catalogue: train and test share no goal and no product; every goal has an instruction", () => {
  const { world, tasks } = generatedSource();
  const { train, test } = tasks.splits!;
  assert.equal(train.length + test.length, world.goals.length);
  const trainAsins = new Set(train.map((i) => world.goals[i].asin));
  assert.ok(test.every((i) => !trainAsins.has(world.goals[i].asin)));
  const trainTexts = new Set(train.map((i) => world.goals[i].instructionText));
  assert.ok(test.every((i) => !trainTexts.has(world.goals[i].instructionText)));
  assert.deepEqual(
    new Set(world.catalog.products.map((p) => p.category)),
    new Set(["fashion", "beauty", "food", "furniture", "electronics"]),
  );
  assert.ok(world.goals.every((g) => g.instructionText.startsWith("Find me ") && g.attributes.length >= 2));
  // A goal's attributes name one product of its kind: none other has all of them (or the goal names all its own).
  for (const g of world.goals) {
    const kind = world.catalog.byAsin.get(g.asin)!.query;
    const others = world.catalog.products.filter((p) => p.query === kind && p.asin !== g.asin);
    const own = world.catalog.byAsin.get(g.asin)!.attributes;
    assert.ok(
      g.attributes.length === own.length || !others.some((p) => g.attributes.every((a) => p.attributes.includes(a))),
      g.instructionText,
    );
  }
});
