import assert from "node:assert/strict";
import { applyOverride, resolveConfig } from "../../src/config/load.ts";
import { CONFIG_KL_KINDS, CONFIG_LOSS_AGG_MODES } from "../../src/config/schema.ts";
import { LOSS_AGG_MODES } from "../../src/train/aggregation.ts";
import { KL_KINDS } from "../../src/train/policy_loss.ts";

const src = (text: string) => ({ text, name: "test.yaml" });

Deno.test("defaults fill what a YAML leaves out, and overrides apply last with YAML values", () => {
  const c = resolveConfig(src("actor:\n  lr: 2.0e-5\nrollout:\n  n: 4\n"), [
    "algorithm.rounds_ctrl.rounds=[10,20,30]",
    "rollout.n=16",
    "model.path=null",
    "actor.kl_loss_type=k3+",
  ]);
  assert.equal(c.actor.lr, 2e-5);
  assert.equal(c.rollout.n, 16);
  assert.deepEqual(c.algorithm.rounds_ctrl.rounds, [10, 20, 30]);
  assert.equal(c.actor.kl_loss_type, "k3+");
  assert.equal(c.actor.loss_agg_mode, "token-mean");
  assert.equal(c.model.path, null);
  assert.equal(c.task, "textcraft");
});

Deno.test("an unknown key or a wrong type stops with the key's path and what was expected", () => {
  assert.throws(() => resolveConfig(src("actor:\n  lrr: 1\n")), /unknown config key "actor\.lrr"/);
  assert.throws(() => resolveConfig(src(""), ["actor.lr=fast"]), /"actor\.lr".*number/i);
  assert.throws(() => resolveConfig(src(""), ["rollout.n=0"]), /"rollout\.n"/);
  assert.throws(() => resolveConfig(src(""), ["actor.loss_agg_mode=mean"]), /"actor\.loss_agg_mode"/);
  assert.throws(() => resolveConfig(src("a: [1"), []), SyntaxError);
  assert.throws(() => resolveConfig(src("- 1\n"), []), /top level must be a mapping/);
  assert.throws(() => applyOverride({}, "actor.lr"), /key\.path=value/);
  assert.throws(() => applyOverride({ actor: 3 }, "actor.lr=1"), /holds a value/);
});

Deno.test("the config's loss and KL names are exactly the trainer's", () => {
  assert.deepEqual([...CONFIG_LOSS_AGG_MODES], [...LOSS_AGG_MODES]);
  assert.deepEqual([...CONFIG_KL_KINDS], [...KL_KINDS, ...KL_KINDS.map((k) => `${k}+`)]);
});

Deno.test("every shipped config resolves against the schema", async () => {
  const { configSource, PRESET_NAMES } = await import("../../src/config/presets.ts");
  for (const name of PRESET_NAMES) {
    const c = resolveConfig(await configSource(name));
    assert.ok(c.task.length > 0, name);
  }
  await assert.rejects(configSource("nope"), /Unknown config "nope"/);
});
