// TextCraft's shaped rewards (task_options.progress_reward and repeat_penalty, tasks/textcraft/shaping.ts), on
// hand-worked episodes: a small world whose tree and plan are written out, and the game's crafting-table task with its
// eight plank kinds. Items on the tree count once, items off it never, a failure stays below a success, a repeat of
// the action refused just before costs the penalty; off, the embedded server plays exactly as the plain one.
import assert from "node:assert/strict";
import { resolveConfig } from "../../../src/config/load.ts";
import { envClient } from "../../../tasks/mod.ts";
import type { ServedGame } from "../../../src/env/server/game.ts";
import { openEnv } from "../../../src/train/setup.ts";
import { tagMembers } from "../../../tasks/textcraft/demos.ts";
import { TextCraftGame } from "../../../tasks/textcraft/game/game.ts";
import { textcraft, TEXTCRAFT_SPLITS } from "../../../tasks/textcraft/mod.ts";
import { solveTask } from "../../../tasks/textcraft/oracle.ts";
import { RL_WORLDS_FIRST } from "../../../tasks/textcraft/rl_worlds.ts";
import { goalTree, type RewardShaping, shapedGame } from "../../../tasks/textcraft/shaping.ts";
import { parseCommandLine, parseOpening, stackPlan } from "../../../tasks/textcraft/stack.ts";
import { type World, WorldGame } from "../../../tasks/textcraft/worlds.ts";
import { tree } from "../../env/helpers.ts";

/**
 * Goal lantern (depth 3). Its tree: torch, stick, oak planks, iron nugget; bamboo is fetched (stick's second recipe),
 * bowl is a distractor (off the tree) that uses oak planks. The stack plan crafts all four intermediates: N = 4.
 */
const LANTERN: World = {
  goal: "lantern",
  depth: 3,
  lines: [
    "craft 1 bowl using 3 oak planks",
    "craft 1 lantern using 1 torch, 8 iron nugget",
    "craft 4 torch using 1 stick, 1 coal",
    "craft 4 stick using 2 oak planks",
    "craft 9 iron nugget using 1 iron ingot",
    "craft 4 oak planks using 1 oak log",
    "craft 2 stick using 1 bamboo",
  ].map(parseCommandLine),
};

function worldGame(w: World): ServedGame {
  const g = new WorldGame(w);
  return { reset: () => g.reset(), step: (a) => g.step(a) };
}

/** Plays `actions` on a shaped game; returns each step's reward. */
function rewards(game: ServedGame, index: bigint, actions: readonly string[]): number[] {
  game.reset(index);
  return actions.map((a) => game.step(a).reward);
}

const near = (got: readonly number[], want: readonly number[]) =>
  assert.ok(got.length === want.length && got.every((x, i) => Math.abs(x - want[i]) < 1e-12), `${got} vs ${want}`);

const PROGRESS: RewardShaping = { progress: 0.4, repeatPenalty: 0 };

Deno.test("the lantern's tree: four intermediate items, the distractor and fetched items left out, N = 4", () => {
  const t = goalTree(parseOpening(new WorldGame(LANTERN).reset()));
  assert.deepEqual([...t.items].sort(), [
    "minecraft:iron_nugget",
    "minecraft:oak_planks",
    "minecraft:stick",
    "minecraft:torch",
  ]);
  assert.equal(t.goal, "minecraft:lantern");
  assert.equal(t.planItems, 4);
});

Deno.test("progress by hand: each tree item once (0.1 each of 0.4), repeats and the off-tree bowl pay nothing", () => {
  const got = rewards(shapedGame(worldGame(LANTERN), PROGRESS), 0n, [
    "get 2 oak log", // 0
    "craft 4 oak planks using 1 oak log", // oak planks: 0.1
    "craft 1 bowl using 3 oak planks", // off the tree: 0.1
    "craft 4 oak planks using 1 oak log", // oak planks again: 0.1
    "craft 4 stick using 2 oak planks", // stick: 0.2
    "get 1 bamboo", // 0.2
    "craft 2 stick using 1 bamboo", // stick by its other recipe: still 0.2
    "get 1 coal", // 0.2
    "craft 4 torch using 1 stick, 1 coal", // torch: 0.3
    "get 1 iron ingot", // 0.3
    "craft 9 iron nugget using 1 iron ingot", // iron nugget: 0.4, all of s
    "craft 1 lantern using 1 torch, 8 iron nugget", // the goal: 1
  ]);
  near(got, [0, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.2, 0.3, 0.3, 0.4, 1]);
});

Deno.test("a refused craft pays nothing, and a new episode starts from 0", () => {
  const game = shapedGame(worldGame(LANTERN), PROGRESS);
  near(rewards(game, 0n, ["craft 4 oak planks using 1 oak log", "get 1 oak log"]), [0, 0]);
  near(rewards(game, 0n, ["get 1 oak log", "craft 4 oak planks using 1 oak log"]), [0, 0.1]);
  near(rewards(game, 0n, ["inventory"]), [0]);
});

Deno.test("the crafting table: any plank kind is on the tree, two kinds are capped at N = 1, a failure stays below 1", () => {
  const index = BigInt(tree.goals.findIndex((g) => g.id === "minecraft:crafting_table"));
  const opening = new TextCraftGame(tree).reset(index);
  const t = goalTree(parseOpening(opening), tagMembers(tree));
  assert.equal(t.items.size, 8, [...t.items].join(", "));
  assert.equal(t.planItems, 1);
  const shaped = (s: number) =>
    shapedGame(new TextCraftGame(tree), { progress: s, repeatPenalty: 0 }, tagMembers(tree));
  const got = rewards(shaped(0.3), index, [
    "get 1 oak logs",
    "craft 4 oak planks using 1 oak logs", // 0.3: the one item of the plan
    "get 1 birch logs",
    "craft 4 birch planks using 1 birch logs", // a second kind: k = 2, capped at N = 1
    "craft 1 crafting table using 4 oak planks",
  ]);
  near(got, [0, 0.3, 0.3, 0.3, 1]);
  // The largest share the option allows: a failure that crafted everything still earns less than a success.
  const most = rewards(shaped(0.99), index, ["get 1 oak logs", "craft 4 oak planks using 1 oak logs"]);
  assert.ok(most[1] === 0.99 && !textcraft.isSuccess(most[1]));
  assert.ok(textcraft.isSuccess(1));
});

Deno.test("a depth-1 goal has no intermediate items: no progress, success 1", () => {
  const index = tree.goals.findIndex((g) => g.id === "minecraft:oak_planks");
  const t = goalTree(parseOpening(new TextCraftGame(tree).reset(BigInt(index))), tagMembers(tree));
  assert.equal(t.planItems, 0);
  const game = shapedGame(new TextCraftGame(tree), PROGRESS, tagMembers(tree));
  near(rewards(game, BigInt(index), ["get 1 oak logs", "craft 4 oak planks using 1 oak logs"]), [0, 1]);
});

Deno.test("every goal's tree as the walk over its list finds it is the game's own recipe walk, and N fits in it", () => {
  const members = tagMembers(tree);
  tree.goals.forEach((g, i) => {
    const t = goalTree(parseOpening(new TextCraftGame(tree).reset(BigInt(i))), members);
    const want = new Set(tree.traverse(g.id).map((r) => r.output));
    want.delete(g.id);
    assert.deepEqual([...t.items].sort(), [...want].sort(), `goal ${i} ${g.id}`);
    // The plan crafts at least one item per level below the goal, and only items of the tree.
    assert.ok(t.planItems >= g.depth - 1 && t.planItems <= t.items.size, `goal ${i}: N ${t.planItems}`);
  });
});

Deno.test("the repeat penalty by hand: a refused action repeated right after costs p each time, nothing else does", () => {
  const game = shapedGame(worldGame(LANTERN), { progress: 0, repeatPenalty: 0.05 });
  const got = rewards(game, 0n, [
    "get 1 torch", // refused (torch is crafted): r = 0
    "get 1 torch", // the refused action again: r = 1
    "get 1 torch", // r = 2
    "inventory", // not refused: r = 2
    "inventory", // a repeat, but of an answered action: r = 2
    "get 1 torch", // refused after another action: r = 2
    "get 2 torch", // another refused action: r = 2
    "get 2 torch", // r = 3
    "get 1 oak log", // answered
    "get 1 oak log", // repeated, answered both times: r = 3
  ]);
  near(got, [0, -0.05, -0.1, -0.1, -0.1, -0.1, -0.1, -0.15, -0.15, -0.15]);
});

Deno.test("penalty and progress together on a failure; a success after loops still scores 1", () => {
  const both = shapedGame(worldGame(LANTERN), { progress: 0.4, repeatPenalty: 0.05 });
  const plan = stackPlan(parseOpening(new WorldGame(LANTERN).reset())).map((t) => t.action);
  const got = rewards(both, 0n, [
    "craft 1 lantern using 1 torch, 8 iron nugget", // refused: nothing in hand
    "craft 1 lantern using 1 torch, 8 iron nugget", // r = 1
    "get 1 oak log",
    "craft 4 oak planks using 1 oak log", // 0.1 - 0.05
  ]);
  near(got, [0, -0.05, -0.05, 0.05]);
  const loops = rewards(both, 0n, ["get 1 stick", "get 1 stick", "get 1 stick", ...plan]);
  assert.equal(loops[loops.length - 1], 1);
});

Deno.test("options: progress_reward must stay below 1, repeat_penalty a share; each refusal names its key", () => {
  assert.throws(() => textcraft.parseOptions!({ progress_reward: 1 }), /task_options\.progress_reward/);
  assert.throws(() => textcraft.parseOptions!({ progress_reward: -0.1 }), /task_options\.progress_reward/);
  assert.throws(() => textcraft.parseOptions!({ repeat_penalty: 2 }), /task_options\.repeat_penalty/);
  const o = textcraft.parseOptions!({});
  assert.equal(o.progress_reward, 0);
  assert.equal(o.repeat_penalty, 0);
  assert.deepEqual(textcraft.embeddedOnly!(o), []);
  assert.deepEqual(textcraft.embeddedOnly!(textcraft.parseOptions!({ repeat_penalty: 0.1 })), ["repeat_penalty"]);
});

/** Plays `actions` on task `index` through a server; returns each step's observation and reward. */
async function viaServer(url: string, index: number, actions: readonly string[]) {
  const client = envClient("textcraft", { urls: [url], retries: 0 });
  const env = await client.create({ parseAction: textcraft.parseAction });
  try {
    await env.reset(index);
    const out = [];
    for (const a of actions) out.push(await env.step(`Action: ${a}`));
    return out.map((s) => ({ observation: s.observation, reward: s.reward }));
  } finally {
    await env.close();
    client.close();
  }
}

Deno.test("off, the embedded server answers as the plain game; on, the oracle's episode climbs to 1 over HTTP", async () => {
  const index = TEXTCRAFT_SPLITS.test[80]; // depth 3
  const plan = solveTask(tree, index).actions;
  const script = ["get 1 stick", "get 1 stick", ...plan];
  const game = new TextCraftGame(tree);
  game.reset(BigInt(index));
  const plain = script.map((a) => game.step(a)).map((s) => ({ observation: s.observation, reward: s.reward }));
  const off = await textcraft.serve!(textcraft.parseOptions!({}));
  const on = await textcraft.serve!(textcraft.parseOptions!({ progress_reward: 0.5, repeat_penalty: 0.1 }));
  try {
    assert.deepEqual(await viaServer(off.url, index, script), plain);
    const shaped = await viaServer(on.url, index, script);
    assert.deepEqual(shaped.map((s) => s.observation), plain.map((s) => s.observation));
    const r = shaped.map((s) => s.reward);
    assert.equal(r[1], -0.1, "the refused get repeated once");
    assert.equal(r[r.length - 1], 1);
    // After the loop, the plan's steps: the score only rises (each craft an item of the tree), below 1 until the goal.
    const failure = r.slice(1, -1);
    assert.ok(failure.every((x, i) => x < 1 && (i === 0 || x >= failure[i - 1])), `${r}`);
    assert.ok(Math.abs(failure[failure.length - 1] - 0.4) < 1e-12, `every item of the plan: 0.5 - 0.1, ${r}`);
  } finally {
    await off.shutdown();
    await on.shutdown();
  }
});

Deno.test("RL worlds pay the same shaping as the tasks beside them", async () => {
  const options = textcraft.parseOptions!({ progress_reward: 0.5, rl_world_depths: [3] });
  const worlds = await textcraft.rlWorlds!(options, { seed: 5, exclude: TEXTCRAFT_SPLITS.test });
  const server = await worlds.serve();
  try {
    const client = envClient("textcraft", { urls: [server.url], retries: 0 });
    const env = await client.create({ parseAction: textcraft.parseAction });
    await env.reset(RL_WORLDS_FIRST);
    const plan = stackPlan(parseOpening(await env.observe()), { maxTurns: 40 });
    const r: number[] = [];
    for (const t of plan) r.push((await env.step(t.reply)).reward);
    await env.close();
    client.close();
    assert.equal(r[r.length - 1], 1);
    assert.ok(Math.abs(r[r.length - 2] - 0.5) < 1e-12, `the plan's items before the goal earn all of s: ${r}`);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a run refuses the shaped rewards with external servers, naming the option and the fix", async () => {
  const c = resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    "task_options.progress_reward=0.3",
    'env.urls=["http://127.0.0.1:9"]',
  ]);
  await assert.rejects(() => openEnv(c), /task_options\.progress_reward=0\.3 is paid by Crucible's embedded/);
});

Deno.test("the evaluation plays the environment's own rule: a shaped run's evalClient reaches a server without it", async () => {
  const c = resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    "task_options.progress_reward=0.3",
    "task_options.repeat_penalty=0.1",
  ]);
  const env = await openEnv(c);
  try {
    assert.notEqual(env.evalClient, env.client);
    // A refused action repeated: the run's server takes the penalty, the evaluation's pays upstream's 0.
    const rewards = async (client: typeof env.client) => {
      const e = await client.create({ parseAction: textcraft.parseAction });
      try {
        await e.reset(TEXTCRAFT_SPLITS.test[80]);
        const r = [];
        for (const a of ["get 1 stick", "get 1 stick"]) r.push((await e.step(`Action: ${a}`)).reward);
        return r;
      } finally {
        await e.close();
      }
    };
    assert.deepEqual(await rewards(env.evalClient), [0, 0]);
    assert.deepEqual(await rewards(env.client), [0, -0.1]);
  } finally {
    await env.close();
  }
  const plain = await openEnv(resolveConfig({ text: "task: textcraft\n", name: "test" }, []));
  try {
    assert.equal(plain.evalClient, plain.client);
  } finally {
    await plain.close();
  }
});
