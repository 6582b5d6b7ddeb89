// TextCraft's RL worlds (data.synthetic_prompts) through the Task hook and its combined server: TextCraft's own
// tasks below RL_WORLDS_FIRST exactly as the plain server plays them, worlds past it at the configured depths, never
// a test goal's name anywhere in them, the same world for the same (seed, k), and solvable through the server.
import assert from "node:assert/strict";
import { envClient } from "../../../tasks/mod.ts";
import { textcraft, TEXTCRAFT_SPLITS } from "../../../tasks/textcraft/mod.ts";
import { TextCraftGame } from "../../../tasks/textcraft/game/game.ts";
import { idToName } from "../../../tasks/textcraft/game/python.ts";
import { RL_WORLDS_FIRST } from "../../../tasks/textcraft/rl_worlds.ts";
import { heldOutWorld } from "../../../tasks/textcraft/synthetic.ts";
import { parseOpening, stackPlan } from "../../../tasks/textcraft/stack.ts";
import { worldOpening } from "../../../tasks/textcraft/worlds.ts";
import type { EmbeddedServer } from "../../../src/task/task.ts";
import { tree } from "../../env/helpers.ts";

const TEST_GOALS = new Set(TEXTCRAFT_SPLITS.test.map((i) => idToName(tree.goals[i % tree.goals.length].id)));
/** Every command line of the test tasks' lists, as the embedded server writes them. */
const TEST_LINES = new Set(
  TEXTCRAFT_SPLITS.test.flatMap((i) =>
    new TextCraftGame(tree).reset(BigInt(i)).split("\n").filter((l) => l.startsWith("craft "))
  ),
);

/** The longest chain of crafts below `item` in an opening's lines (0 for a fetched item), read from the text. */
function depthIn(lines: ReturnType<typeof parseOpening>["lines"], item: string, seen = new Set<string>()): number {
  const own = lines.filter((l) => l.output === item);
  if (own.length === 0 || seen.has(item)) return 0;
  const next = new Set(seen).add(item);
  return 1 + Math.max(...own.flatMap((l) => l.inputs.map((x) => depthIn(lines, x.name, next))));
}

async function withWorlds<T>(
  o: { seed: number; depths?: number[] },
  fn: (reset: (index: number) => Promise<string>, play: (index: number) => Promise<number>) => Promise<T>,
): Promise<T> {
  const options = textcraft.parseOptions!(o.depths ? { rl_world_depths: o.depths } : {});
  const worlds = await textcraft.rlWorlds!(options, { seed: o.seed, exclude: TEXTCRAFT_SPLITS.test });
  assert.equal(worlds.first, RL_WORLDS_FIRST);
  const server: EmbeddedServer = await worlds.serve();
  const client = envClient("textcraft", { urls: [server.url], retries: 0 });
  const reset = async (index: number) => {
    const env = await client.create({ parseAction: textcraft.parseAction });
    try {
      await env.reset(index);
      return await env.observe();
    } finally {
      await env.close();
    }
  };
  // Plays the stack policy's plan for the opening through the server; returns the last reward.
  const play = async (index: number) => {
    const env = await client.create({ parseAction: textcraft.parseAction });
    try {
      await env.reset(index);
      let reward = 0;
      for (const t of stackPlan(parseOpening(await env.observe()), { maxTurns: 40 })) {
        reward = (await env.step(t.reply)).reward;
      }
      return reward;
    } finally {
      await env.close();
    }
  };
  try {
    return await fn(reset, play);
  } finally {
    client.close();
    await server.shutdown();
  }
}

Deno.test("the combined server plays TextCraft's own tasks below the worlds exactly as the plain server does", async () => {
  const plain = await textcraft.serve!({});
  const client = envClient("textcraft", { urls: [plain.url], retries: 0 });
  try {
    await withWorlds({ seed: 5 }, async (reset) => {
      for (const index of [0, 31, 140, 420, 537, RL_WORLDS_FIRST - 1]) {
        const env = await client.create({});
        await env.reset(index);
        assert.equal(await reset(index), await env.observe(), `task ${index}`);
        await env.close();
      }
    });
  } finally {
    client.close();
    await plain.shutdown();
  }
});

Deno.test("RL worlds: the configured depths in turn, no test goal's name anywhere, solvable, a function of (seed, k)", async () => {
  const seen = await withWorlds({ seed: 5, depths: [2, 3, 2] }, async (reset, play) => {
    const openings: string[] = [];
    for (let k = 0; k < 24; k++) {
      const text = await reset(RL_WORLDS_FIRST + k);
      const o = parseOpening(text);
      assert.equal(depthIn(o.lines, o.goal), [2, 3, 2][k % 3], text);
      const names = new Set([o.goal, ...o.lines.flatMap((l) => [l.output, ...l.inputs.map((x) => x.name)])]);
      const hit = [...names].filter((n) => TEST_GOALS.has(n));
      assert.deepEqual(hit, [], `world ${k} names test goals`);
      const real = o.lines.filter((l) => TEST_LINES.has(l.text)).map((l) => l.text);
      assert.deepEqual(real, [], `world ${k} has a test task's recipe line`);
      openings.push(text);
    }
    for (const k of [0, 1, 7]) assert.equal(await play(RL_WORLDS_FIRST + k), 1, `world ${k} solved`);
    assert.equal(new Set(openings).size, openings.length, "every world differs");
    // A world is a function of (seed, k): asked again, the same text.
    assert.equal(await reset(RL_WORLDS_FIRST + 3), openings[3]);
    return openings;
  });
  const other = await withWorlds({ seed: 6, depths: [2, 3, 2] }, (reset) => reset(RL_WORLDS_FIRST + 3));
  assert.notEqual(other, seen[3], "another seed, other worlds");
});

Deno.test("RL worlds of pretraining's seeds are not its held-out worlds, and default to depths 1-4", async () => {
  const names = [...tree.items].map(idToName);
  await withWorlds({ seed: 424242 }, async (reset) => {
    for (let k = 0; k < 8; k++) {
      const o = parseOpening(await reset(RL_WORLDS_FIRST + k));
      assert.equal(depthIn(o.lines, o.goal), 1 + (k % 4));
      assert.notEqual(worldOpening(heldOutWorld(names, 424242, k).world), await reset(RL_WORLDS_FIRST + k));
    }
  });
});

Deno.test("rl_world_depths is checked with its key", () => {
  assert.throws(() => textcraft.parseOptions!({ rl_world_depths: [5] }), /task_options\.rl_world_depths\.0/);
  assert.throws(() => textcraft.parseOptions!({ rl_world_depths: [] }), /task_options\.rl_world_depths/);
});
