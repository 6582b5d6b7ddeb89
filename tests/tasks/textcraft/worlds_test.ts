import assert from "node:assert/strict";
import { TextCraftGame } from "../../../tasks/textcraft/game/game.ts";
import { idToName } from "../../../tasks/textcraft/game/python.ts";
import { Rng } from "../../../src/util/random.ts";
import { parseOpening, stackPlan } from "../../../tasks/textcraft/stack.ts";
import {
  pushesFrame,
  randomWorld,
  type World,
  worldEpisode,
  WorldGame,
  worldOpening,
} from "../../../tasks/textcraft/worlds.ts";
import { tree } from "../../env/helpers.ts";
import { textCraftSynthetic } from "../../../tasks/textcraft/synthetic.ts";
import type { TextEpisode } from "../../../src/task/task.ts";
import { runDeno } from "../../subprocess.ts";

const NAMES = [...tree.items].map(idToName);

/** The longest chain of crafts below an item in a world (0 for a fetched item). */
function depthOf(w: World, item: string, seen = new Set<string>()): number {
  const lines = w.lines.filter((l) => l.output === item);
  if (lines.length === 0 || seen.has(item)) return 0;
  const next = new Set(seen).add(item);
  return 1 + Math.max(...lines.flatMap((l) => l.inputs.map((x) => depthOf(w, x.name, next))));
}

Deno.test("worlds have the asked depth, TextCraft's shapes, and a plan the world's game accepts", () => {
  const rng = new Rng(11);
  for (const depth of [1, 2, 3, 4]) {
    for (let n = 0; n < 100; n++) {
      const { world, episode } = worldEpisode(rng, NAMES, { depth, maxTurns: 24 });
      assert.equal(depthOf(world, world.goal), depth, worldOpening(world));
      for (const l of world.lines) {
        assert.ok(l.inputs.length >= 1 && l.inputs.length <= 4, l.text);
        assert.equal(new Set(l.inputs.map((x) => x.name)).size, l.inputs.length, l.text);
        assert.ok(l.inputs.every((x) => x.count >= 1 && x.count <= 9), l.text);
      }
      assert.ok(world.lines.length <= 60, `${world.lines.length} lines`);
      assert.ok(episode.success, worldOpening(world));
      assert.ok(episode.turns.length <= 24);
      assert.ok(episode.turns.every((t) => !/^(Could not|Wrong)/.test(t.observation)));
    }
  }
});

Deno.test("a world is a function of the generator's state; names differ from world to world", () => {
  const a = randomWorld(new Rng(3), NAMES, { depth: 2 });
  const b = randomWorld(new Rng(3), NAMES, { depth: 2 });
  const c = randomWorld(new Rng(4), NAMES, { depth: 2 });
  assert.deepEqual(a, b);
  assert.notEqual(a.goal, c.goal);
  assert.throws(() => randomWorld(new Rng(1), NAMES, { depth: 5 }), /depth is 1 to 4, got 5/);
  assert.throws(() => randomWorld(new Rng(1), NAMES.slice(0, 10), { depth: 1 }), /at least 40 names/);
});

Deno.test("the generator never reads TextCraft's recipes: its module graph, made-up names, and few real lines", async () => {
  const info = await runDeno([
    "info",
    "--json",
    new URL("../../../tasks/textcraft/worlds.ts", import.meta.url).pathname,
  ]);
  const modules: string[] = JSON.parse(info.out).modules.map((m: { specifier: string }) => m.specifier);
  for (const forbidden of ["recipes.tsv", "tree.ts", "facts_tables.ts", "facts_gen.ts", "minecraft-data"]) {
    assert.ok(!modules.some((m) => m.includes(forbidden)), `worlds.ts reaches ${forbidden}`);
  }
  const made = Array.from({ length: 60 }, (_, i) => `thing${i}`);
  const w = worldEpisode(new Rng(5), made, { depth: 3, maxTurns: 24 });
  assert.ok(w.episode.success);
  assert.ok(w.world.lines.every((l) => made.includes(l.output)));
  // Real recipe lines over real names: a generator that copied the tables would reproduce many of them.
  const real = new Set<string>();
  const game = new TextCraftGame(tree);
  for (let i = 0; i < tree.goals.length; i++) {
    for (const l of game.reset(BigInt(i)).split("\n")) if (l.startsWith("craft ")) real.add(l);
  }
  const rng = new Rng(9);
  let lines = 0, same = 0;
  for (let n = 0; n < 400; n++) {
    for (const l of randomWorld(rng, NAMES, { depth: 1 + (n % 4) }).lines) lines++, same += real.has(l.text) ? 1 : 0;
  }
  assert.ok(same / lines < 0.002, `${same} of ${lines} generated lines are TextCraft's`);
});

Deno.test("the world's game answers as TextCraft's does, message for message, on the game's own lists", () => {
  const game = new TextCraftGame(tree);
  let compared = 0;
  for (let i = 0; i < tree.goals.length; i += 7) {
    const opening = game.reset(BigInt(i));
    const parsed = parseOpening(opening);
    // Tags need the game's tag table, which a world does not have.
    if (parsed.lines.some((l) => l.inputs.some((x) => tree.tags.has(`minecraft:${x.name.replaceAll(" ", "_")}`)))) {
      continue;
    }
    const world: World = { lines: parsed.lines, goal: parsed.goal, depth: 0 };
    const sim = new WorldGame(world);
    assert.equal(sim.reset(), opening);
    const first = parsed.lines[0];
    const wrong = [first.text, `get 1 ${parsed.goal}`, "look around", "inventory", `craft 1 ${first.output}`];
    const plan = stackPlan(parsed).map((t) => t.action);
    for (const action of [...wrong, ...plan.slice(0, -1), "inventory", plan[plan.length - 1]]) {
      assert.deepEqual(sim.step(action), game.step(action), `task ${i}: ${action}`);
    }
    compared++;
  }
  assert.ok(compared > 40, `tasks compared: ${compared}`);
});

Deno.test("misreads: refused by the game, never two in a row, the plan unchanged around them; none drawn at rate 0", () => {
  let misreads = 0, episodes = 0;
  const kinds = new Set<string>();
  for (let n = 0; n < 200; n++) {
    const depth = 1 + (n % 4);
    const plain = worldEpisode(new Rng(100 + n), NAMES, { depth, maxTurns: 24 });
    // Asking for none draws exactly the episodes of before (the option consumes no randomness at 0).
    assert.deepEqual(worldEpisode(new Rng(100 + n), NAMES, { depth, maxTurns: 24, misreads: 0 }), plain);
    const { world, episode } = worldEpisode(new Rng(100 + n), NAMES, { depth, maxTurns: 24, misreads: 0.2 });
    assert.deepEqual(world, plain.world);
    // Without its misreads, the episode is the plain one: the right replies and the game's answers are unchanged.
    assert.deepEqual(episode.turns.filter((t) => !t.misread), plain.episode.turns);
    assert.ok(episode.success);
    const wrong = episode.turns.filter((t) => t.misread);
    assert.ok(wrong.length <= 2);
    episode.turns.forEach((t, i) => {
      if (!t.misread) return;
      assert.match(t.observation, /^Could not (find|execute)/, t.reply);
      assert.ok(!episode.turns[i + 1].misread, "a right reply follows every misread");
      assert.notEqual(t.reply, episode.turns[i + 1].reply);
      kinds.add(/Action: (get|craft)/.exec(t.reply)![1] + ":" + t.observation.split(" ").slice(0, 5).join(" "));
    });
    misreads += wrong.length, episodes += wrong.length > 0 ? 1 : 0;
  }
  assert.ok(episodes > 50, `${episodes} episodes of 200 have a misread`);
  // All three of TextCraft's refusals occur: a craftable item fetched, too few inputs, a recipe that does not match.
  const seen = [...kinds].join("\n");
  for (const k of ["get:Could not find", "craft:Could not find enough items", "craft:Could not find a valid"]) {
    assert.ok(seen.includes(k), `${k} in\n${seen}`);
  }
  assert.ok(misreads > episodes);
});

Deno.test("skipped pushes: the thought stops before the pushed frame, the reply fetches its item, the game refuses", () => {
  let skipped = 0, pushes = 0;
  for (let n = 0; n < 200; n++) {
    const depth = 2 + (n % 3);
    for (const frames of ["tail", "count"] as const) {
      const o = { depth, maxTurns: 24, frames, misreads: 0.3 };
      const before = worldEpisode(new Rng(300 + n), NAMES, o);
      // At share 0 the option draws nothing: the episodes of before, misreads and all.
      assert.deepEqual(worldEpisode(new Rng(300 + n), NAMES, { ...o, skippedPushes: 0 }), before);
      const { world, episode } = worldEpisode(new Rng(300 + n), NAMES, { ...o, skippedPushes: 1 });
      assert.deepEqual(world, before.world);
      const plain = worldEpisode(new Rng(300 + n), NAMES, { depth, maxTurns: 24, frames });
      assert.deepEqual(episode.turns.filter((t) => !t.misread), plain.episode.turns);
      assert.ok(episode.success);
      episode.turns.forEach((t, i) => {
        if (!t.misread) return;
        const right = episode.turns[i + 1].reply;
        const get = /\nAction: get (\d+) (.+)$/.exec(t.reply);
        const thought = (r: string) => r.slice(0, r.indexOf("\nAction: "));
        // A skipped push: the right reply's thought is this one's plus one frame, for the item fetched here.
        if (
          !get || !thought(right).startsWith(thought(t.reply) + " | " + get[2] + (frames === "tail" ? " using " : " "))
        ) {
          return;
        }
        skipped++;
        assert.equal(t.observation, `Could not find ${get[2]}`);
        assert.ok(world.lines.some((l) => l.output === get[2]), `${get[2]} has a line of its own`);
        // Its count is the one the frame below names for the item.
        assert.match(thought(t.reply), new RegExp(`${get[1]} ${get[2]}(,| x\\d|$)`));
      });
      pushes += plain.episode.turns.filter((t, i) => pushesFrame(plain.episode.turns[i - 1]?.reply, t.reply)).length;
    }
  }
  assert.ok(pushes > 200, `${pushes} turns push a frame`);
  assert.ok(skipped > 100, `${skipped} skipped pushes`);
});

Deno.test("pushesFrame: a new top frame, not one the previous reply had at that depth", () => {
  const r = (...frames: string[]) => `Thought: ${frames.join(" | ")}\nAction: get 1 x`;
  const a = "banner using 6 black wool, 1 stick", b = "black wool using 1 black dye, 1 white wool x2";
  assert.ok(pushesFrame(undefined, r(a, b)), "the first reply pushes below the goal");
  assert.ok(!pushesFrame(undefined, r(a)), "the goal's frame alone is no push");
  assert.ok(pushesFrame(r(a), r(a, b)));
  assert.ok(!pushesFrame(r(a, b), r(a, "black wool using 1 black dye, 1 white wool")), "the same frame, one craft on");
  assert.ok(pushesFrame(r(a, b), r(a, "stick using 2 oak planks")), "a sibling after a pop");
  assert.ok(!pushesFrame(r(a, b), r(a)), "a pop");
  assert.ok(pushesFrame(r("a 1: 2 b"), r("a 1: 2 b", "b 2: 1 c")), "count frames");
});

Deno.test("craft_count one: synthetic and held-out episodes write craft 1, draw the same worlds and get the same answers", () => {
  const line = textCraftSynthetic(NAMES, { frames: "tail", misreads: 0.1 });
  const one = textCraftSynthetic(NAMES, { frames: "tail", misreads: 0.1, craftCount: "one" });
  let crafts = 0, changed = 0;
  const compare = (a: TextEpisode, b: TextEpisode, what: string) => {
    assert.equal(b.opening, a.opening, what);
    assert.equal(b.turns.length, a.turns.length, what);
    b.turns.forEach((t, k) => {
      // A refused craft's message quotes the action's count (`count=4)`), the one place the game reads it.
      const quoted = (o: string) => (t.misread ? o.replace(/count=\d+\)$/, "count=N)") : o);
      assert.equal(quoted(t.observation), quoted(a.turns[k].observation), `${what} turn ${k}`);
      const action = t.reply.split("\nAction: ")[1];
      if (action.startsWith("craft ") && !t.misread) {
        crafts++;
        assert.match(action, /^craft 1 /, `${what} turn ${k}`);
        if (action !== a.turns[k].reply.split("\nAction: ")[1]) changed++;
      }
    });
  };
  for (let i = 0; i < 40; i++) {
    compare(line.heldOut(424242, i), one.heldOut(424242, i), `held-out ${i}`);
    compare(line.episode(new Rng(i), 1), one.episode(new Rng(i), 1), `episode ${i}`);
  }
  assert.ok(crafts > 100 && changed > 20, `${crafts} crafts, ${changed} of them with a yield other than 1`);
});

Deno.test("look-up drills: frames `X` answered by ` using` and X's one line, X often another line's input too, no plan", () => {
  const synthetic = textCraftSynthetic(NAMES, { frames: "tail" });
  let asks = 0, keyed = 0, offPlan = 0;
  const rng = new Rng(5);
  for (let n = 0; n < 200; n++) {
    const pieces = synthetic.drill!(rng, n % 2);
    assert.ok(!pieces[0].trained && pieces[0].text.endsWith("\n\nThought:"), pieces[0].text);
    const { lines } = parseOpening(pieces[0].text.slice(0, -"\n\nThought:".length));
    const pairs = pieces.slice(1);
    assert.ok(pairs.length >= 2 && pairs.length % 2 === 0, `${pairs.length} pieces after the opening`);
    let previous: string[] = [];
    const isInput = (item: string) => lines.some((l) => l.inputs.some((x) => x.name === item));
    const askable = lines.filter((l) => lines.filter((m) => m.output === l.output).length === 1);
    const asked = pairs.filter((_, k) => k % 2 === 0).map((p) => /^(?: \|)? (.+)$/.exec(p.text)![1]);
    if (asked.some((x) => !isInput(x))) {
      assert.ok(askable.every((l) => !isInput(l.output) || asked.includes(l.output)), "items that are inputs first");
    }
    for (let k = 0; k < pairs.length; k += 2) {
      const [ask, answer] = [pairs[k], pairs[k + 1]];
      assert.ok(!ask.trained && answer.trained);
      const item = new RegExp(`^${k > 0 ? " \\|" : ""} (.+)$`).exec(ask.text)?.[1];
      assert.ok(item !== undefined, ask.text);
      const own = lines.filter((l) => l.output === item);
      assert.equal(own.length, 1, `${item} has one line to look up`);
      // The answer starts at ` using`, so that ` using 9` may be one token (vocabulary.ts's count phrases).
      assert.equal(answer.text, ` using ${own[0].text.split(" using ")[1]}`);
      asks++;
      if (lines.some((l) => l.inputs.some((x) => x.name === item))) keyed++;
      if (k > 0 && !previous.includes(item)) offPlan++;
      previous = own[0].inputs.map((x) => x.name);
    }
  }
  assert.ok(asks > 400, `asks ${asks}`);
  assert.ok(keyed > asks / 3, `the asked item is another line's input in ${keyed} of ${asks}`);
  assert.ok(offPlan > asks / 3, `the next ask is not the previous frame's input in ${offPlan} of ${asks}`);
});
