// Credit for each turn, end to end: episodes played against TextCraft's embedded server with its shaped rewards keep
// each step's reward and the state each turn acted from; what each turn earned (the change in the server's score, the
// progress on the craft that made it, the penalty on the repeat that took it, nothing for a reply the task gave
// locally) and the anchors reach a turns estimator through the RL step's advantages; GiGPO's advantages of the two
// episodes are the ones worked out by hand below, on each turn's own tokens.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import type { EstimatorInput } from "../../src/rl/advantages.ts";
import { ADVANTAGE_ESTIMATORS } from "../../src/rl/estimators.ts";
import { runRollouts } from "../../src/rollout/agent.ts";
import { ScriptedSampler } from "../../src/rollout/scripted.ts";
import { episodeTurns, type Trajectory, turnRewards, turnSpans } from "../../src/rollout/trajectory.ts";
import { stateAnchor } from "../../src/task/anchor.ts";
import { tokenAdvantages } from "../../src/train/rl_step.ts";
import { envClient } from "../../tasks/mod.ts";
import { TextCraftGame } from "../../tasks/textcraft/game/game.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { ONLY_ONE_ACTION } from "../../tasks/textcraft/rules.ts";
import { webshop } from "../../tasks/webshop/mod.ts";
import { tree } from "../env/helpers.ts";

const reply = (a: string) => `Thought:\nnext step.\n\nAction:\n${a}`;

// Task 141 crafts an acacia button: one intermediate item (acacia planks), so the progress reward pays all of its
// 0.3 for the planks. Episode A loops on a refused get (the repeat costs 0.1), sends two actions in one reply (the
// task answers locally), then plays the plan; episode B plays the plan.
const TASK = 141;
const PLAN = [
  "get 1 acacia logs",
  "craft 4 acacia planks using 1 acacia logs",
  "craft 1 acacia button using 1 acacia planks",
];
const LOOP = ["get 1 acacia button", "get 1 acacia button"];
const A = [...LOOP.map(reply), `${reply("inventory")}\nAction:\ninventory`, ...PLAN.map(reply)];
const B = PLAN.map(reply);

/** Both episodes, played by a scripted policy against the embedded server with progress_reward 0.3, repeat_penalty 0.1. */
async function play(): Promise<Trajectory[]> {
  const game = new TextCraftGame(tree);
  const texts = [textcraft.prompt.user, textcraft.prompt.assistant, game.reset(BigInt(TASK)), ONLY_ONE_ACTION, ...A];
  for (const a of [...LOOP, ...PLAN]) texts.push(game.step(a).observation);
  const tok = wordTokenizer(texts);
  const stop = tok.id("<|im_end|>");
  const server = await textcraft.serve!(textcraft.parseOptions!({ progress_reward: 0.3, repeat_penalty: 0.1 }));
  const client = envClient("textcraft", { urls: [server.url] });
  try {
    const sampler = new ScriptedSampler(tok, (seed) => (seed === 0 ? A : B), stop);
    const specs = [0, 1].map((seed) => ({ task: TASK, group: 0, seed }));
    return await runRollouts({ generator: sampler, tokenizer: tok, client, task: textcraft }, specs, {
      maxRounds: 10,
      maxTokensPerTurn: 64,
      maxResponseLength: 4096,
      maxPromptLength: 4096,
      sampling: { temperature: 1 },
      stopIds: [stop],
    });
  } finally {
    client.close();
    await server.shutdown();
  }
}

const [a, b] = await play();

const near = (x: readonly number[], y: readonly number[], what: string) => {
  assert.equal(x.length, y.length, what);
  x.forEach((v, i) => assert.ok(Math.abs(v - y[i]) < 1e-12, `${what} [${i}]: ${v} against ${y[i]}`));
};

Deno.test("a rollout keeps each step's reward, and each turn earned the change it made to the server's score", () => {
  assert.equal(a.finish, "done");
  assert.equal(a.reward, 1);
  // The server pays the score so far: 0, then -0.1 for the repeat, nothing from the local reply, still -0.1 after the
  // logs, 0.3 - 0.1 once the planks are crafted, 1 for the goal.
  near(a.turns.map((t) => t.reward), [0, -0.1, 0, -0.1, 0.2, 1], "the server's rewards");
  assert.equal(a.turns[2].action, null, "two actions in one reply are answered locally");
  near(turnRewards(a.turns), [0, -0.1, 0, 0, 0.3, 0.8], "what each turn earned");
  near(turnRewards(b.turns), [0, 0.3, 0.7], "the plan alone");
  assert.ok(Math.abs(turnRewards(a.turns).reduce((s, r) => s + r, 0) - a.reward!) < 1e-12, "they add up to the reward");
});

Deno.test("each turn acted from the state its task names: TextCraft's inventory, unchanged by a refusal", () => {
  const empty = stateAnchor(textcraft, { firstObservation: a.firstObservation, turns: [], observation: "" });
  const anchors = a.turns.map((t) => t.anchor);
  // Refused gets and the local reply leave the inventory empty: four turns from one state.
  assert.deepEqual(anchors.slice(0, 4), [empty, empty, empty, empty]);
  assert.equal(new Set(anchors.slice(3)).size, 3, "the logs, then the planks: new states");
  assert.deepEqual(b.turns.map((t) => t.anchor), [empty, anchors[4], anchors[5]], "the plan reaches the same states");
  // Without the hook, the observation would be the state: the refusal's text is no state of the game.
  assert.notEqual(
    anchors[1],
    stateAnchor({}, { firstObservation: "", turns: [], observation: a.turns[0].observation }),
  );
  assert.ok(anchors.every((x) => /^[0-9a-f]{16}$/.test(x)), "anchors are 16-digit digests");
});

/** What an estimator registered for the test is given by the RL step's advantages, with or without `turns`. */
function handed(turns: boolean, train: Trajectory[]): EstimatorInput {
  let seen: EstimatorInput | undefined;
  ADVANTAGE_ESTIMATORS.register({
    name: "test_probe",
    summary: "records what it is given (a test's own)",
    keys: [],
    turns,
    estimate: (x) => {
      seen = x;
      return { advantages: x.masks.map((m) => Array.from(m, () => 0)) };
    },
  });
  try {
    tokenAdvantages(
      resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, ["algorithm.adv_estimator=test_probe"]),
      train,
    );
  } finally {
    ADVANTAGE_ESTIMATORS.unregister("test_probe");
  }
  return seen!;
}

Deno.test("the turns' tokens, rewards and anchors reach a turns estimator through the RL step", () => {
  const seen = handed(true, [a, b]);
  assert.ok(seen.turns, "a turns estimator gets the turns");
  near(seen.turns[0].rewards, turnRewards(a.turns), "rewards");
  assert.deepEqual(seen.turns[0].anchors, a.turns.map((t) => t.anchor));
  assert.deepEqual(seen.turns[1], episodeTurns(b));
  // One span per turn, exactly the runs of sampled tokens.
  assert.equal(seen.turns[0].spans.length, 6);
  assert.deepEqual(seen.turns[0].spans, turnSpans(a.mask));
  for (const [s, e] of seen.turns[0].spans) assert.ok(a.mask.slice(s, e).every((m) => m === 1) && a.mask[e] !== 1);
  // Other estimators are not handed them, so episodes made by hand without turns still serve those.
  assert.equal(handed(false, [a, b]).turns, undefined);
  const bare = { ...a, turns: [] };
  assert.equal(handed(false, [bare]).turns, undefined);
  assert.throws(() => handed(true, [bare]), /6 runs of sampled tokens but 0 turns/);
});

Deno.test("GiGPO's advantages of the two episodes, worked by hand, on each turn's own tokens", () => {
  const c = resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, ["algorithm.adv_estimator=gigpo"]);
  const rows = tokenAdvantages(c, [a, b]);
  // Both succeed: the episode level is 0. Returns (gamma 0.95), A: 0.8 at the planks; 0.3 + 0.95 · 0.8 = 1.06 at the
  // logs; 0.95 · 1.06 = 1.007, 0.95 · 1.007 = 0.95665, -0.1 + 0.95 · 0.95665 = 0.8088175 and 0.95 · that = 0.768376625
  // back through the empty inventory. B: 0.7, 0.3 + 0.665 = 0.965, 0.95 · 0.965 = 0.91675.
  const fromEmpty = [0.768376625, 0.8088175, 0.95665, 1.007, 0.91675];
  const mean = (0.768376625 + 0.8088175 + 0.95665 + 1.007 + 0.91675) / 5;
  const wantA = [...fromEmpty.slice(0, 4).map((r) => r - mean), 1.06 - 1.0125, 0.8 - 0.75];
  const wantB = [0.91675 - mean, 0.965 - 1.0125, 0.7 - 0.75];
  for (const [t, row, want] of [[a, rows[0], wantA], [b, rows[1], wantB]] as const) {
    const spans = turnSpans(t.mask);
    near(spans.map(([s]) => row[s]), want, "each turn's advantage");
    spans.forEach(([s, e], k) => assert.ok(row.slice(s, e).every((x) => x === row[s]), `turn ${k}: one value`));
    assert.ok(row.every((x, j) => t.mask[j] === 1 || x === 0), "0 on the environment's tokens");
  }
});

Deno.test("WebShop's anchor is the page the agent sees, as a task without the hook", () => {
  const seen = { firstObservation: "WebShop [SEP] Search", turns: [], observation: "Back to Search [SEP] Page 1" };
  assert.equal(stateAnchor(webshop, seen), stateAnchor({}, seen));
  assert.notEqual(stateAnchor(webshop, seen), stateAnchor(webshop, { ...seen, observation: "Back to Search" }));
});
