// The KL estimators' registry (src/rl/kl.ts): verl's names and aliases, each with the GPU kernel's branch; a trailing
// `+` is straight-through; an estimator registered here is accepted by the config and is what the objective computes;
// an unknown name is refused when the config is read and when the step resolves its loss, naming the registered ones.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { KL_CODES } from "../../src/ops/policy_loss.ts";
import { KL_ESTIMATORS, klEstimator } from "../../src/rl/kl.ts";
import { policyObjective } from "../../src/rl/policy_loss.ts";
import { lossOf } from "./loss_settings.ts";

const config = (overrides: string[]) => resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, overrides);

Deno.test("verl's names and aliases, each on the kernel's branch of the estimator it computes", () => {
  assert.deepEqual(KL_ESTIMATORS.names(), ["k1", "kl", "abs", "k2", "mse", "k3", "low_var_kl"]);
  const codes = Object.fromEntries(KL_ESTIMATORS.entries().map((e) => [e.name, e.code]));
  assert.deepEqual(codes, { k1: 0, kl: 0, abs: 1, k2: 2, mse: 2, k3: 3, low_var_kl: 3 });
  assert.equal(KL_CODES.k3, 3);
  for (const [alias, base] of [["kl", "k1"], ["mse", "k2"], ["low_var_kl", "k3"]]) {
    assert.equal(KL_ESTIMATORS.get(alias).term, KL_ESTIMATORS.get(base).term, `${alias} is ${base}`);
  }
  assert.deepEqual(klEstimator("k3+"), { estimator: KL_ESTIMATORS.get("k3"), straightThrough: true });
  assert.equal(lossOf({ klKind: "k2+" }).kernel.straightThrough, true);
  assert.equal(lossOf({ klKind: "none" }).kernel.klCode, KL_CODES.none);
});

Deno.test("an estimator registered here is accepted by the config and is the one the objective computes", () => {
  KL_ESTIMATORS.register({
    name: "test_double",
    summary: "2d (a test's own)",
    keys: [],
    code: KL_CODES.k1,
    term: (d) => [2 * d, 2],
  });
  try {
    assert.equal(config(["actor.kl_loss_type=test_double+"]).actor.kl_loss_type, "test_double+");
    const x = { logp: [-1], entropy: [0], oldLogp: [-1], refLogp: [-1.5], advantages: [0], weights: [1] };
    const got = policyObjective(x, lossOf({ klKind: "test_double", klCoef: 1, entropyCoef: 0 }));
    assert.deepEqual([got.loss, got.dlogp[0]], [1, 2]); // 2·(−1 − −1.5), d/dlogp 2
  } finally {
    KL_ESTIMATORS.unregister("test_double");
  }
});

Deno.test("an unknown estimator is refused by the config and by the step's resolution, naming the registered ones", () => {
  assert.throws(
    () => config(["actor.kl_loss_type=k4"]),
    /"actor\.kl_loss_type": is "k4", which is no registered KL estimator .*registered: k1, kl, abs, k2, mse, k3, low_var_kl/,
  );
  assert.throws(() => lossOf({ klKind: "k4+" }), /Unknown KL estimator "k4" \(actor\.kl_loss_type\); registered: k1/);
});
