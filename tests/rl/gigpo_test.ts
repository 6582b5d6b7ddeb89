// GiGPO (src/rl/gigpo.ts) against values worked by hand: the two levels, a step group of one, one anchor in two prompt
// groups, the same state twice in one episode, normalizeByStd at both levels; its episode level is GRPO's exactly; the
// registered entry spreads each turn's advantage over that turn's tokens and logs its step groups' numbers.
import assert from "node:assert/strict";
import { explainAlgorithms, explainKey } from "../../src/config/explain.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { type EpisodeTurns, grpoAdvantages } from "../../src/rl/advantages.ts";
import { advantageEstimator } from "../../src/rl/estimators.ts";
import { gigpoAdvantages, type GigpoEpisode } from "../../src/rl/gigpo.ts";
import { Rng } from "../../src/util/random.ts";

const close = (a: number[][], b: number[][], what: string) => {
  assert.equal(a.length, b.length, what);
  a.forEach((row, i) => {
    assert.equal(row.length, b[i].length, `${what}: episode ${i}`);
    row.forEach((x, t) => assert.ok(Math.abs(x - b[i][t]) < 1e-12, `${what}: [${i}][${t}] ${x} against ${b[i][t]}`));
  });
};

const turns = (...ts: [string, number][]) => ts.map(([anchor, reward]) => ({ anchor, reward }));

Deno.test("gigpo: the two levels on two episodes that share their first state (defaults: gamma 0.95, w 1, no std)", () => {
  const out = gigpoAdvantages([
    { group: 0, score: 1, turns: turns(["s0", 0], ["s1", 1]) },
    { group: 0, score: 0, turns: turns(["s0", 0], ["s2", 0]) },
  ]);
  // Episode level: scores 1 and 0 about their mean 0.5. Step level: from s0 the returns are 0.95 (0 + 0.95 · 1) and 0,
  // about their mean 0.475; s1 and s2 are step groups of one, 0.
  assert.deepEqual(out.episode, [0.5, -0.5]);
  close(out.turns, [[0.5 + 0.475, 0.5], [-0.5 - 0.475, -0.5]], "turns");
});

Deno.test("gigpo: a step group of one gives 0, and one anchor in two prompt groups is two step groups", () => {
  const episodes: GigpoEpisode[] = [
    { group: "a", score: 1, turns: turns(["s", 0], ["t", 1]) },
    { group: "a", score: 0, turns: turns(["s", 0]) },
    { group: "b", score: 0.5, turns: turns(["s", 0.5]) },
  ];
  // gamma 0.5: returns 0.5 and 1, then 0; then 0.5. Episode level: group a about 0.5, group b alone keeps its score
  // (GRPO's group of one). Step level: (a, s) holds 0.5 and 0, about 0.25; (a, t) and (b, s) hold one turn each.
  const out = gigpoAdvantages(episodes, { gamma: 0.5 });
  assert.deepEqual(out.episode, [0.5, -0.5, 0.5]);
  close(out.turns, [[0.75, 0.5], [-0.75], [0.5]], "gamma 0.5");
  // Pooled across the groups, (s) would hold 0.5, 0 and 0.5 and move group b's turn: it does not.
  close(gigpoAdvantages(episodes, { gamma: 0.5, stepWeight: 2 }).turns, [[1, 0.5], [-1], [0.5]], "w 2");
  close(gigpoAdvantages(episodes, { gamma: 0.5, stepWeight: 0 }).turns, [[0.5, 0.5], [-0.5], [0.5]], "w 0");
});

Deno.test("gigpo: normalizeByStd divides both levels by their group's unbiased std + 1e-6", () => {
  const episodes: GigpoEpisode[] = [
    { group: 0, score: 1, turns: turns(["s", 0], ["u", 1]) },
    // The same state twice in one episode (a refused action changes nothing): both turns join s's step group.
    { group: 0, score: 0, turns: turns(["s", 0], ["s", 0]) },
    { group: 0, score: 0, turns: turns(["v", 0]) },
    // Equal returns: exactly 0 at both levels, never 0/1e-6 noise.
    { group: 1, score: 0.25, turns: turns(["w", 0.25]) },
    { group: 1, score: 0.25, turns: turns(["w", 0.25]) },
  ];
  // Group 0's scores 1, 0, 0 and step group s's returns 1, 0, 0 have mean 1/3 and unbiased std sqrt(1/3).
  const sd = Math.sqrt(1 / 3) + 1e-6, hi = (2 / 3) / sd, lo = (-1 / 3) / sd;
  const out = gigpoAdvantages(episodes, { gamma: 1, normalizeByStd: true });
  close([out.episode], [[hi, lo, lo, 0, 0]], "episode level");
  close(out.turns, [[hi + hi, hi], [lo + lo, lo + lo], [lo], [0], [0]], "turns");
  assert.ok(out.turns[3][0] === 0 && out.turns[4][0] === 0, "equal returns give exactly 0");
});

Deno.test("gigpo: its episode level is GRPO's exactly, with and without the std, on random groups", () => {
  const rng = new Rng(57);
  for (let trial = 0; trial < 20; trial++) {
    const episodes: GigpoEpisode[] = Array.from({ length: 1 + rng.int(12) }, () => ({
      group: rng.int(4),
      score: rng.int(3) === 0 ? 1 : rng.int(10) / 10,
      turns: Array.from({ length: 1 + rng.int(5) }, () => ({ anchor: `s${rng.int(3)}`, reward: rng.int(4) / 4 })),
    }));
    for (const normalizeByStd of [false, true]) {
      const out = gigpoAdvantages(episodes, { normalizeByStd, stepWeight: 0 });
      const grpo = grpoAdvantages(episodes.map((e) => e.score), episodes.map((e) => e.group), { normalizeByStd });
      assert.deepEqual(out.episode, grpo);
      assert.deepEqual(out.turns, episodes.map((e, i) => e.turns.map(() => grpo[i])), "w 0 is GRPO on every turn");
    }
  }
});

Deno.test("gigpo: settings out of range are refused naming the value", () => {
  assert.throws(() => gigpoAdvantages([], { gamma: 1.5 }), /gamma must be in \[0, 1\], got 1.5/);
  assert.throws(() => gigpoAdvantages([], { stepWeight: NaN }), /step weight must be finite, got NaN/);
});

const config = (overrides: string[] = []) =>
  resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, ["algorithm.adv_estimator=gigpo", ...overrides]);

/** The first test's episodes as the RL step hands them over: tokens, turns' spans, rewards and anchors. */
const INPUT = {
  scores: [1, 0],
  groups: [0, 0],
  masks: [[1, 1, 0, 0, 1], [1, 0, 1, 1]],
  turns: [
    { spans: [[0, 2], [4, 5]], rewards: [0, 1], anchors: ["s0", "s1"] },
    { spans: [[0, 1], [2, 4]], rewards: [0, 0], anchors: ["s0", "s2"] },
  ] as EpisodeTurns[],
};

Deno.test("the gigpo entry: each turn's advantage on its own tokens, and the step groups' numbers", () => {
  const c = config();
  assert.deepEqual(c.algorithm.gigpo, { gamma: 0.95, step_weight: 1, normalize_by_std: false });
  const e = advantageEstimator("gigpo");
  assert.equal(e.turns, true);
  const out = e.estimate(INPUT, c.algorithm);
  close(out.advantages, [[0.975, 0.975, 0, 0, 0.5], [-0.975, 0, -0.5, -0.5]], "tokens");
  // 4 turns in 3 step groups (s0 twice, s1, s2): half the turns share theirs; the step level gives 2 · 0.475 of the
  // 4 · 0.5 + 2 · 0.475 the turns' advantages add up to in magnitude.
  assert.deepEqual(Object.keys(out.metrics!).sort(), [
    "gigpo_step_advantage_share",
    "gigpo_step_group_size",
    "gigpo_turns_grouped",
  ]);
  assert.equal(out.metrics!.gigpo_turns_grouped, 0.5);
  assert.equal(out.metrics!.gigpo_step_group_size, 4 / 3);
  assert.ok(Math.abs(out.metrics!.gigpo_step_advantage_share - 0.95 / 2.95) < 1e-12);
  // The config's keys reach the math.
  const tuned = config(["algorithm.gigpo.gamma=0.5", "algorithm.gigpo.step_weight=2"]);
  close(e.estimate(INPUT, tuned.algorithm).advantages, [[1, 1, 0, 0, 0.5], [-1, 0, -0.5, -0.5]], "gamma 0.5, w 2");
});

Deno.test("the gigpo entry: no share is logged when every advantage is 0, and turns are required", () => {
  const c = config();
  const e = advantageEstimator("gigpo");
  const same = { ...INPUT, scores: [0, 0], turns: INPUT.turns.map((t) => ({ ...t, rewards: [0, 0] })) };
  const out = e.estimate(same, c.algorithm);
  assert.deepEqual(out.advantages, [[0, 0, 0, 0, 0], [0, 0, 0, 0]]);
  assert.equal(out.metrics!.gigpo_step_advantage_share, undefined, "not computed is absent, never 0");
  assert.equal(out.metrics!.gigpo_turns_grouped, 0.5);
  assert.throws(() => e.estimate({ ...INPUT, turns: undefined }, c.algorithm), /need each episode's turns/);
  const short = { ...INPUT, turns: [INPUT.turns[0], { ...INPUT.turns[1], anchors: ["s0"] }] };
  assert.throws(() => e.estimate(short, c.algorithm), /episode 1 has 2 turns' tokens, 2 rewards and 1 anchors/);
});

Deno.test("gigpo in the config: registered, listed with its keys, and its settings checked", () => {
  assert.match(explainAlgorithms(), /gigpo/);
  assert.match(explainAlgorithms(), /algorithm\.gigpo\.step_weight/);
  assert.match(explainKey("algorithm.gigpo.gamma"), /0\.95/);
  assert.match(explainKey("algorithm.adv_estimator"), /gigpo: GiGPO/);
  assert.throws(() => config(["algorithm.gigpo.gamma=1.5"]), /algorithm\.gigpo\.gamma/);
  assert.throws(() => config(["algorithm.gigpo.step_weight=-1"]), /algorithm\.gigpo\.step_weight/);
  assert.throws(() => config(["algorithm.gigpo.lambda=1"]), /algorithm\.gigpo\.lambda/);
  assert.equal(config(["algorithm.gigpo.normalize_by_std=true"]).algorithm.gigpo.normalize_by_std, true);
  // verl-agent's name for the step level's weight.
  assert.equal(config(["algorithm.gigpo.step_advantage_w=0.5"]).algorithm.gigpo.step_weight, 0.5);
});
