// The studio page's settings: shown from the resolved config, turned back into the overrides deno task train takes
// (only those that changed), refused with the setting's name when they do not read, and the command line that
// trains the same in Deno, which resolves to the same config.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { configSource } from "../../src/config/presets.ts";
import { overridesFrom, SETTINGS, settingText, trainCommand } from "../../src/studio/settings.ts";

const textcraft = resolveConfig(await configSource("textcraft"));

Deno.test("settings show the config's values; unchanged ones give no override, changed ones the config's key", async () => {
  const texts = Object.fromEntries(SETTINGS.map((s) => [s.key, settingText(textcraft, s)]));
  assert.equal(texts["algorithm.rounds_ctrl.rounds"], "10, 15, 20");
  assert.equal(texts["rollout.n"], "8");
  assert.deepEqual(overridesFrom(textcraft, texts), []);
  const changed = { ...texts, "rollout.n": " 4 ", "algorithm.rounds_ctrl.rounds": "5,10", "actor.lr": "2e-4" };
  const overrides = overridesFrom(textcraft, changed);
  assert.deepEqual(overrides, ["rollout.n=4", "actor.lr=2e-4", "algorithm.rounds_ctrl.rounds=[5, 10]"]);
  const c = resolveConfig(await configSource("textcraft"), overrides);
  assert.equal(c.rollout.n, 4);
  assert.equal(c.actor.lr, 2e-4);
  assert.deepEqual(c.algorithm.rounds_ctrl.rounds, [5, 10]);
});

Deno.test("a setting that does not read is refused with its label", () => {
  const texts = { "rollout.n": "four" };
  assert.throws(() => overridesFrom(textcraft, texts), /^RangeError: group size must be a whole number, got "four"$/);
  assert.throws(
    () => overridesFrom(textcraft, { "algorithm.rounds_ctrl.rounds": "10, x" }),
    /rounds must be whole numbers separated by commas \(e\.g\. 10, 15, 20\), got "10, x"/,
  );
  assert.throws(() => overridesFrom(textcraft, { "actor.lr": "" }), /learning rate must be a number/);
});

Deno.test("trainCommand quotes what a shell would split", () => {
  assert.equal(
    trainCommand("textcraft_smoke", ["trainer.total_steps=2", "algorithm.rounds_ctrl.rounds=[5, 10]"]),
    "deno task train textcraft_smoke trainer.total_steps=2 'algorithm.rounds_ctrl.rounds=[5, 10]'",
  );
  assert.equal(trainCommand("textcraft", [`model.path="it's"`]), `deno task train textcraft 'model.path="it'"'"'s"'`);
});
