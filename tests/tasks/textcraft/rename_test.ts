import assert from "node:assert/strict";
import { Rng } from "../../../src/util/random.ts";
import { ItemRenamer } from "../../../tasks/textcraft/rename.ts";
import { tree } from "../../env/helpers.ts";

Deno.test("item renaming is a consistent permutation over names and ids, longest first, tags untouched", () => {
  const r = new ItemRenamer(tree);
  assert.ok(r.names.includes("diamond chestplate") && !r.names.includes("oak planks") && !r.names.includes("planks"));
  const map = r.permutation(new Rng(7));
  assert.deepEqual([...map.values()].sort(), [...r.names].sort(), "a permutation");
  const text = "craft 1 diamond chestplate using 8 diamond\nGot 8 diamond\nCrafted 1 minecraft:diamond_chestplate\n" +
    "craft 4 stick using 2 planks\nget 1 oak planks";
  const out = r.apply(text, map);
  const dc = map.get("diamond chestplate")!, d = map.get("diamond")!;
  assert.equal(
    out,
    `craft 1 ${dc} using 8 ${d}\nGot 8 ${d}\nCrafted 1 minecraft:${dc.replaceAll(" ", "_")}\n` +
      "craft 4 stick using 2 planks\nget 1 oak planks".replace("stick", map.get("stick") ?? "stick"),
  );
  const back = new Map([...map].map(([a, b]) => [b, a]));
  assert.equal(r.apply(out, back), text, "the inverse permutation restores the text");
});
