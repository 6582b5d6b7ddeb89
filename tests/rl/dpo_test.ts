// TRL's DPO losses on plain arrays, against values worked by hand; their gradient against finite differences; the
// metrics TRL logs; AgentGym's pairing rule.
import assert from "node:assert/strict";
import { dpoLogitGrad, dpoLoss, dpoMetrics, type DpoOptions, preferred } from "../../src/rl/dpo.ts";
import { assertClose } from "../reference/check.ts";

const EXACT = { atol: 1e-12, rtol: 1e-12 };

// Pair 0: the policy moved 1 nat towards the chosen trajectory and 1 away from the rejected one, z = 2.
// Pair 1: the policy is the reference, z = 0. Pair 2: a large margin, z = 20.
const PAIRS = {
  chosen: [-10, -7, -3],
  rejected: [-12, -9, -30],
  refChosen: [-11, -7, -5],
  refRejected: [-11, -9, -12],
};

Deno.test("dpoLoss: sigmoid by hand, its rewards, and a pair where the policy is the reference", () => {
  const r = dpoLoss(PAIRS);
  // −log σ(βz) = log(1 + e^(−βz)): log(1 + e^−0.2) = 0.598138869..., log 2, log(1 + e^−2) = 0.126928011...
  assertClose("losses", r.losses, [0.5981388693815918, Math.LN2, 0.12692801104297263], EXACT);
  assertClose("chosen rewards", r.chosenRewards, [0.1, 0, 0.2], EXACT);
  assertClose("rejected rewards", r.rejectedRewards, [-0.1, 0, -1.8], EXACT);
});

Deno.test("dpoLoss: label smoothing adds ε·βz to the sigmoid loss", () => {
  // −(1 − ε) log σ(x) − ε log σ(−x) = −log σ(x) + εx, since log σ(x) − log σ(−x) = x.
  const r = dpoLoss(PAIRS, { labelSmoothing: 0.1 });
  assertClose("losses", r.losses, [0.5981388693815918 + 0.02, Math.LN2, 0.12692801104297263 + 0.2], EXACT);
});

Deno.test("dpoLoss: ipo and hinge by hand", () => {
  // IPO: (z − 1/(2β))², 1/(2β) = 5 at β = 0.1 and 1 at β = 0.5.
  assertClose("ipo", dpoLoss(PAIRS, { lossType: "ipo" }).losses, [9, 25, 225], EXACT);
  assertClose("ipo, β 0.5", dpoLoss(PAIRS, { lossType: "ipo", beta: 0.5 }).losses, [1, 1, 361], EXACT);
  // Hinge: max(0, 1 − βz).
  assertClose("hinge", dpoLoss(PAIRS, { lossType: "hinge" }).losses, [0.8, 1, 0], EXACT);
  assertClose(
    "hinge rewards at β 0.5",
    dpoLoss(PAIRS, { lossType: "hinge", beta: 0.5 }).chosenRewards,
    [0.5, 0, 1],
    EXACT,
  );
});

Deno.test("dpoLogitGrad matches central finite differences of dpoLoss for every loss type", () => {
  const cases: DpoOptions[] = [{}, { labelSmoothing: 0.2, beta: 0.3 }, { lossType: "ipo" }, { lossType: "hinge" }];
  for (const o of cases) {
    const g = dpoLogitGrad(PAIRS, o);
    const h = 1e-6;
    const fd = PAIRS.chosen.map((_, i) => {
      const at = (d: number) => dpoLoss({ ...PAIRS, chosen: PAIRS.chosen.map((c, k) => (k === i ? c + d : c)) }, o);
      return (at(h).losses[i] - at(-h).losses[i]) / (2 * h);
    });
    assertClose(`d loss / d z, ${JSON.stringify(o)}`, g, fd, { atol: 1e-8, rtol: 1e-6 });
  }
  // By hand: sigmoid −β σ(−βz); at z = 0 that is −β/2.
  assertClose("sigmoid at z = 0", [dpoLogitGrad(PAIRS)[1]], [-0.05], EXACT);
});

Deno.test("dpoMetrics are TRL's means: loss, rewards, accuracies, margins", () => {
  const m = dpoMetrics(dpoLoss(PAIRS));
  assertClose("loss", [m.loss], [(0.5981388693815918 + Math.LN2 + 0.12692801104297263) / 3], EXACT);
  assertClose("chosen", [m["rewards/chosen"]], [0.1], EXACT);
  assertClose("rejected", [m["rewards/rejected"]], [-1.9 / 3], EXACT);
  // Pair 1 ties (0 = 0): not an accurate pair, as TRL's strict > counts it.
  assertClose("accuracies", [m["rewards/accuracies"]], [2 / 3], EXACT);
  assertClose("margins", [m["rewards/margins"]], [(0.2 + 0 + 2) / 3], EXACT);
  assert.throws(() => dpoMetrics({ losses: [], chosenRewards: [], rejectedRewards: [] }), RangeError);
});

Deno.test("dpoLoss refuses bad options and ragged arrays, naming them", () => {
  assert.throws(() => dpoLoss(PAIRS, { beta: 0 }), /beta must be > 0/);
  assert.throws(() => dpoLoss(PAIRS, { lossType: "robust" as "ipo" }), /use one of sigmoid, ipo, hinge/);
  assert.throws(() => dpoLoss(PAIRS, { lossType: "ipo", labelSmoothing: 0.1 }), /sigmoid loss only/);
  assert.throws(() => dpoLoss({ ...PAIRS, refRejected: [1] }), /refRejected has 1 values, chosen has 3/);
});

Deno.test("preferred follows make_dpo_dataset.py: a gap, a threshold, the better one chosen either way", () => {
  const rule = { rewardGap: 0.01, expertThreshold: 0.7 };
  assert.equal(preferred(1, 0, rule), "expert");
  assert.equal(preferred(1, 0.995, rule), undefined); // the gap is under 0.01
  assert.equal(preferred(0.75, 0.9, rule), "explored"); // the explored one is better and above 0.7
  assert.equal(preferred(0.6, 0.1, rule), undefined); // the better one is under 0.7
  assert.equal(preferred(0.7, 0.69, rule), "expert"); // both bounds inclusive
  assert.equal(preferred(1, 1, rule), undefined);
});
