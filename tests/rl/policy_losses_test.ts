// The policy losses' registry (src/rl/policy_losses.ts): the vanilla entry is PPO's clipped surrogate and the GPU
// kernel beside it; a loss registered here is accepted by the config and its surrogate is what policyObjective
// computes; an unknown name is refused when the config is read and when the step resolves its loss settings.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { policyLossForward } from "../../src/ops/policy_loss.ts";
import { policyObjective, resolvePolicyLoss } from "../../src/rl/policy_loss.ts";
import { POLICY_LOSSES, policyLoss } from "../../src/rl/policy_losses.ts";
import { type PolicyLoss, surrogateTerm } from "../../src/rl/surrogate.ts";
import { DEFAULT_LOSS, lossOf } from "./loss_settings.ts";

const config = (overrides: string[]) => resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, overrides);

const TOKENS = {
  logp: [Math.log(1.5), Math.log(0.5), -1],
  entropy: [1, 2, 3],
  oldLogp: [0, 0, -1],
  refLogp: [0, 0, 0],
  advantages: [1, -1, 2],
  weights: [0.5, 0.25, 0.25],
};

Deno.test("the vanilla loss is PPO's clipped surrogate with its kernel, and the config's default", () => {
  const v = policyLoss("vanilla");
  assert.equal(v.term, surrogateTerm);
  assert.equal(v.kernel, policyLossForward);
  assert.equal(config([]).actor.policy_loss, "vanilla");
  assert.equal(DEFAULT_LOSS.loss, "vanilla");
});

Deno.test("a loss registered here is accepted by the config and is the surrogate policyObjective computes", () => {
  // No clip at all: −A·ρ with gradient −A·ρ, ρ = exp(logp − oldLogp); the vanilla loss clips tokens 0 and 1.
  const unclipped: PolicyLoss = {
    name: "test_unclipped",
    summary: "the plain importance-weighted surrogate (a test's own)",
    keys: [],
    term(logp, oldLogp, a) {
      const ratio = Math.exp(logp - oldLogp);
      return { loss: -a * ratio, grad: -a * ratio, ratio, clipped: 0, clippedLower: 0 };
    },
    kernel: policyLossForward,
  };
  POLICY_LOSSES.register(unclipped);
  try {
    assert.equal(config(["actor.policy_loss=test_unclipped"]).actor.policy_loss, "test_unclipped");
    const got = policyObjective(TOKENS, lossOf({ loss: "test_unclipped", klKind: "none", entropyCoef: 0 }));
    // Σ w·(−A·ρ): 0.5·(−1.5) + 0.25·(0.5) + 0.25·(−2).
    assert.ok(Math.abs(got.loss - (-0.75 + 0.125 - 0.5)) < 1e-12, `${got.loss}`);
    assert.deepEqual([...got.dlogp].map((g) => Math.round(g * 1e12) / 1e12), [-0.75, 0.125, -0.5]);
    const vanilla = policyObjective(TOKENS, lossOf({ klKind: "none", entropyCoef: 0 }));
    assert.notEqual(vanilla.loss, got.loss, "the registered surrogate, not the vanilla one, was computed");
  } finally {
    POLICY_LOSSES.unregister("test_unclipped");
  }
});

Deno.test("an unknown policy loss is refused by the config and the loss settings, naming the registered ones", () => {
  assert.throws(
    () => config(["actor.policy_loss=gspo"]),
    /config key "actor\.policy_loss": is "gspo", which is no registered policy loss; registered: vanilla/,
  );
  assert.throws(
    () => resolvePolicyLoss({ ...DEFAULT_LOSS, loss: "gspo" }),
    /Unknown policy loss "gspo" \(actor\.policy_loss\); registered: vanilla/,
  );
});
