// Off-policy corrections: truncated importance weights against a hand-worked case, their equivalence with weighting
// the policy-gradient term, the staleness bound (a trajectory past it dropped with its group and counted, through
// rlStep itself), and the config's tie of tis_cap to recompute_old_logprob.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import type { Trajectory } from "../../src/rollout/trajectory.ts";
import { boundStaleness, stalenessRule, tisMetrics, tisWeights } from "../../src/rl/off_policy.ts";
import { policyObjective } from "../../src/rl/policy_loss.ts";
import { lossOf } from "./loss_settings.ts";
import { rlStep, type RlStepContext } from "../../src/train/rl_step.ts";
import { stepMetrics } from "../../src/train/step_metrics.ts";

Deno.test("TIS weights: a hand-worked case of truncation, observation tokens and the clip fraction", () => {
  // Sequence 0: tokens 0 and 2 sampled, 1 an observation. Sequence 1: one sampled token.
  // ratio e^(−1 − (−1.5)) = e^0.5 = 1.6487 > 1.5 → 1.5 (clipped); e^(−2 − (−1)) = e^−1 = 0.3679; e^0 = 1.
  const w = tisWeights([[-1, 9, -2], [-0.5]], [[-1.5, -9, -1], [-0.5]], [[1, 0, 1], [1]], 1.5);
  assert.deepEqual(w.weights, [[1.5, 1, Math.exp(-1)], [1]]);
  assert.equal(w.tokens, 3);
  assert.equal(w.clipped, 1);
  const m = tisMetrics(w);
  assert.equal(m.tis_clipfrac, 1 / 3);
  assert.ok(Math.abs(m.tis_ratio_mean - (Math.exp(0.5) + Math.exp(-1) + 1) / 3) < 1e-15);
  assert.ok(Math.abs(m.tis_weight_mean - (1.5 + Math.exp(-1) + 1) / 3) < 1e-15);
  assert.deepEqual(tisMetrics(tisWeights([[0]], [[0]], [[0]], 2)), {}, "no sampled token: no metric, never 0");
  assert.throws(() => tisWeights([[0]], [[0]], [[1]], 0), /tis_cap must be > 0, got 0/);
  assert.throws(() => tisWeights([[0, 0]], [[0]], [[1, 1]], 2), /sequence 0 has 2 mask entries/);
});

Deno.test("TIS through the advantage: pg(A·w) = w·pg(A), loss and gradient, clipped and dual-clipped tokens alike", () => {
  // ρ = e^0.5 (clipped above for A > 0), e^1.5 with A < 0 (dual clip), e^−0.1 (unclipped).
  const base = { entropy: [0, 0, 0], refLogp: [0, 0, 0], weights: [0.5, 0.25, 0.25] };
  const x = { ...base, logp: [-0.5, -0.5, -0.6], oldLogp: [-1, -2, -0.5], advantages: [1, -2, 0.7] };
  const w = [1.5, 0.4, 2];
  const s = lossOf({ klKind: "none", entropyCoef: 0 });
  const plain = policyObjective(x, s);
  const weighted = policyObjective({ ...x, advantages: x.advantages.map((a, t) => a * w[t]) }, s);
  const byToken = x.weights.map((_, t) =>
    policyObjective({ ...x, weights: x.weights.map((v, k) => (k === t ? v : 0)) }, s).loss
  );
  assert.ok(Math.abs(weighted.loss - byToken.reduce((a, l, t) => a + w[t] * l, 0)) < 1e-12);
  for (let t = 0; t < 3; t++) assert.ok(Math.abs(weighted.dlogp[t] - w[t] * plain.dlogp[t]) < 1e-12, `token ${t}`);
  // The clip decisions (stats columns 3 and 4) do not change.
  for (let t = 0; t < 3; t++) {
    assert.deepEqual([weighted.stats[t * 8 + 3], weighted.stats[t * 8 + 4]], [
      plain.stats[t * 8 + 3],
      plain.stats[t * 8 + 4],
    ]);
  }
  assert.equal(plain.stats[3], 1, "token 0 is ratio-clipped");
  assert.equal(plain.stats[8 + 4], 1, "token 1 is dual-clipped");
});

Deno.test("staleness bound: groups with a member past the bound are dropped whole; the histogram counts all", () => {
  const ts = [
    { group: 0, version: 5 },
    { group: 0, version: 5 },
    { group: 1, version: 4 },
    { group: 2, version: 3 },
    { group: 2, version: 4 },
    { group: 3 },
  ];
  // Step 6 starts from learner version 5.
  const s = boundStaleness(ts, 6, stalenessRule(1));
  assert.deepEqual(s.kept.map((t) => t.group), [0, 0, 1, 3]);
  assert.deepEqual(s.dropped, [{ group: 2, version: 3 }, { group: 2, version: 4 }]);
  assert.deepEqual([...s.histogram].sort(), [[0, 3], [1, 2], [2, 1]]);
  assert.equal(boundStaleness(ts, 6, stalenessRule(2)).dropped.length, 0);
  assert.equal(boundStaleness(ts, 6, stalenessRule(0)).kept.length, 3);
  assert.throws(() => boundStaleness(ts, 4, stalenessRule(0)), /version 5 is newer than the learner's 3/);
  assert.throws(() => stalenessRule(-1), /max_staleness must be a whole number >= 0, got -1/);
  assert.throws(() => stalenessRule(0.5), /max_staleness must be a whole number >= 0, got 0\.5/);
});

Deno.test("the staleness rule: version v is usable at step s when s - 1 - v <= k; the oldest usable never below 0", () => {
  const rule = stalenessRule(1);
  assert.deepEqual([3, 2, 1].map((v) => rule.usable(v, 4)), [true, true, false]);
  assert.deepEqual([3, 2, 1].map((v) => rule.behind(v, 4)), [0, 1, 2]);
  assert.deepEqual([1, 2, 4].map((s) => rule.oldest(s)), [0, 0, 2]);
  assert.deepEqual([1, 2, 3].map((s) => stalenessRule(0).oldest(s)), [0, 1, 2], "k = 0: the learner's own version");
});

function trajectory(group: number, version: number): Trajectory {
  // No sampled token: not trainable, so the step ends before any GPU work.
  return {
    task: group,
    group,
    seed: group,
    promptIds: [1, 2],
    responseIds: [3],
    mask: [0],
    logprobs: [0],
    reward: 1,
    success: true,
    rounds: 1,
    finish: "done",
    firstObservation: "",
    turns: [],
    version,
  };
}

Deno.test("rlStep drops a rollout source's trajectory past rollout.max_staleness and counts it", async () => {
  const config = resolveConfig({ text: "", name: "test" }, [
    "rollout.max_staleness=1",
    "rollout.n=2",
    "algorithm.rounds_ctrl.type=fixed",
    "algorithm.rounds_ctrl.rounds=[2]",
  ]);
  const played: Trajectory[] = [trajectory(0, 3), trajectory(0, 3), trajectory(1, 1), trajectory(1, 1)];
  const ctx = {
    config,
    stopIds: [0],
    lr: () => 0,
    source: {
      play: () => Promise.resolve({ trajectories: played, seconds: { prefill: 0, decode: 0, env: 0 }, metrics: {} }),
    },
    staleness: stalenessRule(config.rollout.max_staleness),
  } as unknown as RlStepContext;
  // Step 4 trains on learner version 3: group 1 (version 1) is 2 behind, past the bound of 1.
  const r = await rlStep(ctx, 4, [10, 11]);
  assert.deepEqual(r.trajectories.map((t) => t.group), [0, 0]);
  const m = stepMetrics(r);
  assert.equal(m.stale_dropped, 2);
  assert.equal(m.staleness_0, 2);
  assert.equal(m.staleness_2, 2);
  assert.equal(m.episodes, 2);
});

Deno.test("actor.tis_cap needs the learner's own log-probs (recompute_old_logprob)", () => {
  const c = resolveConfig({ text: "", name: "test" }, ["actor.tis_cap=2"]);
  assert.equal(c.actor.tis_cap, 2);
  assert.equal(resolveConfig({ text: "", name: "test" }).actor.tis_cap, null);
  assert.equal(resolveConfig({ text: "", name: "test" }).rollout.max_staleness, 0);
  assert.throws(
    () => resolveConfig({ text: "", name: "test" }, ["actor.tis_cap=2", "actor.recompute_old_logprob=false"]),
    /tis_cap.*recompute_old_logprob=true/s,
  );
});
