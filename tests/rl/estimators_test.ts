// The advantage estimators' registry (src/rl/estimators.ts): each built-in entry computes exactly what its function in
// advantages.ts computes from the config's keys (gigpo's, which credits each turn, in gigpo_test.ts); an estimator
// registered here is accepted by the config and picked up by name by the RL step's advantages; an unknown name is
// refused when the config is read, naming the registered ones.
import assert from "node:assert/strict";
import { explainKey } from "../../src/config/explain.ts";
import { resolveConfig } from "../../src/config/load.ts";
import {
  type AdvantageEstimator,
  broadcastAdvantages,
  gaeAdvantages,
  grpoAdvantages,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
} from "../../src/rl/advantages.ts";
import { ADVANTAGE_ESTIMATORS, advantageEstimator } from "../../src/rl/estimators.ts";
import { Registry } from "../../src/rl/registry.ts";
import { tokenAdvantages } from "../../src/train/rl_step.ts";
import { episode } from "./episodes.ts";

const config = (overrides: string[]) => resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, overrides);

const X = {
  scores: [1, 0, 0.5, 1, 1],
  groups: [0, 0, 0, 1, 1],
  masks: [[1, 0, 1], [1, 1], [0, 1, 1, 0], [1], [1, 1]],
};
const S = { gamma: 0.9, lam: 0.8, norm_adv_by_std_in_grpo: false };

Deno.test("each built-in estimator is its function of advantages.ts, fed the config keys its entry names", () => {
  const want: Record<string, number[][]> = {
    grpo: broadcastAdvantages(grpoAdvantages(X.scores, X.groups, { normalizeByStd: false }), X.masks),
    rloo: broadcastAdvantages(rlooAdvantages(X.scores, X.groups), X.masks),
    reinforce_plus_plus:
      reinforcePlusPlusAdvantages(outcomeRewards(X.scores, X.masks), X.masks, { gamma: 0.9 }).advantages,
    reinforce_plus_plus_baseline: reinforceBaselineAdvantages(X.scores, X.groups, X.masks),
  };
  for (const [name, rows] of Object.entries(want)) {
    assert.deepEqual(advantageEstimator(name).estimate(X, S).advantages, rows, name);
  }
  const values = X.masks.map((m) => m.map((_, t) => 0.1 * t));
  const gae = gaeAdvantages(outcomeRewards(X.scores, X.masks), values, X.masks, { gamma: 0.9, lambda: 0.8 });
  assert.deepEqual(advantageEstimator("gae").estimate({ ...X, values }, S), gae);
  assert.throws(() => advantageEstimator("gae").estimate(X, S), /critic's values/);
  assert.deepEqual(ADVANTAGE_ESTIMATORS.names(), [
    "grpo",
    "rloo",
    "reinforce_plus_plus",
    "reinforce_plus_plus_baseline",
    "gae",
    "gigpo",
  ]);
  assert.deepEqual(ADVANTAGE_ESTIMATORS.entries().filter((e) => e.critic).map((e) => e.name), ["gae"]);
});

Deno.test("every config key an estimator says it reads is a key of the config", () => {
  for (const e of ADVANTAGE_ESTIMATORS.entries()) {
    for (const key of e.keys) assert.doesNotThrow(() => explainKey(key), `${e.name} reads ${key}`);
  }
});

/** Episodes of one prompt group with the given rewards, each with two trained tokens around an observation. */
const episodes = (rewards: number[]) => rewards.map((r) => episode(r, [1, 0, 1]));

Deno.test("an estimator registered here is accepted by the config, listed, and picked up by name by the step", () => {
  // Advantage = the score times algorithm.gamma on every trained token: nothing like any built-in one.
  const scaled: AdvantageEstimator = {
    name: "test_scaled_score",
    summary: "the score times gamma (a test's own)",
    keys: ["algorithm.gamma"],
    estimate: (x, s) => ({ advantages: broadcastAdvantages(x.scores.map((v) => v * s.gamma), x.masks) }),
  };
  assert.throws(() => config(["algorithm.adv_estimator=test_scaled_score"]), /no registered advantage estimator/);
  ADVANTAGE_ESTIMATORS.register(scaled);
  try {
    const c = config(["algorithm.adv_estimator=test_scaled_score", "algorithm.gamma=0.5"]);
    assert.deepEqual(tokenAdvantages(c, episodes([1, 0, 0.25])), [[0.5, 0, 0.5], [0, 0, 0], [0.125, 0, 0.125]]);
    assert.match(explainKey("algorithm.adv_estimator"), /test_scaled_score: the score times gamma/);
    assert.throws(
      () => ADVANTAGE_ESTIMATORS.register(scaled),
      /advantage estimator named "test_scaled_score" is registered/,
    );
  } finally {
    ADVANTAGE_ESTIMATORS.unregister("test_scaled_score");
  }
  assert.throws(() => advantageEstimator("test_scaled_score"), RangeError);
});

Deno.test("an unknown estimator is refused when the config is read, naming the registered ones", () => {
  assert.throws(
    () => config(["algorithm.adv_estimator=ppo"]),
    new RegExp(
      'config key "algorithm\\.adv_estimator": is "ppo", which is no registered advantage estimator; ' +
        "registered: grpo, rloo, reinforce_plus_plus, reinforce_plus_plus_baseline, gae, gigpo",
    ),
  );
  assert.throws(
    () => advantageEstimator("ppo"),
    /Unknown advantage estimator "ppo" \(algorithm\.adv_estimator\); registered: grpo/,
  );
  assert.throws(() => tokenAdvantages(config(["algorithm.adv_estimator=gae"]), episodes([1, 0])), /critic's values/);
});

Deno.test("a registry refuses a name taken twice or not written as a config value", () => {
  const r = new Registry("thing", "x.thing", [{ name: "a", summary: "", keys: [] }]);
  assert.throws(() => r.register({ name: "a", summary: "", keys: [] }), /thing named "a" is registered/);
  assert.throws(() => r.register({ name: "Has Space", summary: "", keys: [] }), /lower-case/);
  assert.equal(r.unregister("a"), true);
  assert.deepEqual(r.names(), []);
});
