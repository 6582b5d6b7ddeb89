import assert from "node:assert/strict";
import { TextCraftGame } from "../../../../tasks/textcraft/game/game.ts";
import { pyInt, pyRepr, pyStr, pyStrip, PythonError } from "../../../../tasks/textcraft/game/python.ts";
import { taskOf, tree } from "../../../env/helpers.ts";

Deno.test("Python's repr, strip and int limits, as the observation strings expose them", () => {
  assert.equal(pyRepr("minecraft:oak_planks"), "'minecraft:oak_planks'");
  assert.equal(pyRepr("it's"), `"it's"`);
  assert.equal(pyRepr(`it's "x"`), `'it\\'s "x"'`);
  assert.equal(pyRepr("a\\b\tc\u0001\u00a0\u200b"), "'a\\\\b\\tc\\x01\\xa0\\u200b'");
  assert.equal(pyRepr("é 日本"), "'é 日本'");
  assert.equal(pyStrip("\x1c x \x85"), "x");
  assert.equal(pyStrip("\ufeffx"), "\ufeffx");
  assert.equal(pyInt("0042"), 42n);
  assert.throws(() => pyInt("9".repeat(4301)), /Exceeds the limit \(4300\) .* 4301 digits/);
  assert.equal(pyStr(-(10n ** 4299n)).length, 4301);
  assert.throws(() => pyStr(10n ** 4300n), PythonError);
});

Deno.test("a count past Python's digit limit is the server's error, not an observation", () => {
  const game = new TextCraftGame(tree);
  game.reset(BigInt(taskOf("minecraft:stick")));
  assert.throws(() => game.step(`get ${"1".repeat(4301)} dirt`), PythonError);
  assert.throws(() => game.step(`craft ${"1".repeat(4301)} stick using 2 oak planks`), PythonError);
  assert.equal(game.step("get 1 dirt").observation, "Got 1 dirt");
});
