import assert from "node:assert/strict";
import { TextCraftGame } from "../../../tasks/textcraft/game/game.ts";
import { tagMembers } from "../../../tasks/textcraft/demos.ts";
import { parseOpening, stackPlan } from "../../../tasks/textcraft/stack.ts";
import { tree } from "../../env/helpers.ts";
import { wordTokenizer } from "../../../src/model/word_tokenizer.ts";

const OPENING = [
  "Crafting commands:",
  "craft 3 blue carpet using 2 blue wool",
  "craft 1 white wool using 4 string",
  "craft 1 blue wool using 1 blue dye, 1 white wool",
  "craft 8 red carpet using 8 white carpet, 1 red dye",
  "craft 1 blue dye using 1 lapis lazuli",
  "craft 1 blue dye using 1 cornflower",
  "",
  "Goal: craft blue carpet.",
].join("\n");

Deno.test("an opening parses into lines and a goal; a malformed one is a SyntaxError naming it", () => {
  const o = parseOpening(OPENING);
  assert.equal(o.goal, "blue carpet");
  assert.equal(o.lines.length, 6);
  assert.deepEqual(o.lines[2], {
    output: "blue wool",
    count: 1,
    inputs: [{ name: "blue dye", count: 1 }, { name: "white wool", count: 1 }],
    text: "craft 1 blue wool using 1 blue dye, 1 white wool",
  });
  assert.throws(() => parseOpening("Crafting commands:\ncraft 1 x using 1 y\n"), /Goal: craft X/);
  assert.throws(() => parseOpening("Crafting commands:\ncraft x using 1 y\n\nGoal: craft x."), /craft x using 1 y/);
});

Deno.test("the stack policy, worked by hand: frames root first, crafts repeated, the first line of an item", () => {
  const replies = stackPlan(parseOpening(OPENING)).map((t) => t.reply);
  const carpet = "Thought: blue carpet 1: 2 blue wool";
  const wool = (k: number) => `blue wool ${k}: 1 blue dye, 1 white wool`;
  // Two blue wool at one per craft: blue wool is crafted twice, each time from a fresh blue dye and white wool.
  const round = (k: number) => [
    `${carpet} | ${wool(k)} | blue dye 1: 1 lapis lazuli\nAction: get 1 lapis lazuli`,
    `${carpet} | ${wool(k)} | blue dye 1: 1 lapis lazuli\nAction: craft 1 blue dye using 1 lapis lazuli`,
    `${carpet} | ${wool(k)} | white wool 1: 4 string\nAction: get 4 string`,
    `${carpet} | ${wool(k)} | white wool 1: 4 string\nAction: craft 1 white wool using 4 string`,
    `${carpet} | ${wool(k)}\nAction: craft 1 blue wool using 1 blue dye, 1 white wool`,
  ];
  assert.deepEqual(replies, [...round(2), ...round(1), `${carpet}\nAction: craft 3 blue carpet using 2 blue wool`]);
  // Every name is the token that follows a space, as in the command list and the goal.
  const tok = wordTokenizer(["Crafting commands:", OPENING, replies.join("\n")], {
    phrases: ["blue carpet", "blue wool", "blue dye", "white wool", "lapis lazuli", "red carpet", "white carpet"],
  });
  const spaced = new Set(
    ["blue carpet", "blue wool", "blue dye", "white wool", "lapis lazuli"].map((n) => tok.id(` ${n}`)),
  );
  const bare = new Set(["blue carpet", "blue wool", "blue dye", "white wool", "lapis lazuli"].map((n) => tok.id(n)));
  for (const r of replies) {
    const ids = tok.encode(r);
    assert.ok(ids.some((id) => spaced.has(id)) && !ids.some((id) => bare.has(id)), r);
  }
});

Deno.test("a goal without a line, or a recipe loop, is a RangeError", () => {
  assert.throws(() => stackPlan(parseOpening("Crafting commands:\ncraft 1 a using 1 b\n\nGoal: craft c.")), /"c"/);
  const loop = "Crafting commands:\ncraft 1 a using 1 b\ncraft 1 b using 1 a\n\nGoal: craft a.";
  assert.throws(() => stackPlan(parseOpening(loop)), /loop through "a"/);
});

Deno.test("the stack policy solves every one of TextCraft's 544 tasks through the game, tags included", () => {
  const game = new TextCraftGame(tree);
  const members = tagMembers(tree);
  let tagged = 0;
  for (let i = 0; i < tree.goals.length; i++) {
    const opening = game.reset(BigInt(i));
    const turns = stackPlan(parseOpening(opening), { tagMembers: members });
    if (turns.some((t) => !opening.includes(t.action) && t.action.startsWith("craft"))) tagged++;
    let done = false;
    for (const [k, t] of turns.entries()) {
      const r = game.step(t.action);
      assert.ok(!/^(Could not|Wrong)/.test(r.observation), `task ${i} turn ${k}: ${t.action} -> ${r.observation}`);
      done = r.done;
    }
    assert.ok(done, `task ${i} ends with its goal crafted`);
  }
  assert.ok(tagged > 50, `tasks that craft with a tag member: ${tagged}`);
});

Deno.test("tail frames: each frame is its command line from the item on, xK only while more than one craft is left", () => {
  const replies = stackPlan(parseOpening(OPENING), { frames: "tail" }).map((t) => t.reply);
  const carpet = "Thought: blue carpet using 2 blue wool";
  const wool = (k: number) => `blue wool using 1 blue dye, 1 white wool${k > 1 ? ` x${k}` : ""}`;
  const round = (k: number) => [
    `${carpet} | ${wool(k)} | blue dye using 1 lapis lazuli\nAction: get 1 lapis lazuli`,
    `${carpet} | ${wool(k)} | blue dye using 1 lapis lazuli\nAction: craft 1 blue dye using 1 lapis lazuli`,
    `${carpet} | ${wool(k)} | white wool using 4 string\nAction: get 4 string`,
    `${carpet} | ${wool(k)} | white wool using 4 string\nAction: craft 1 white wool using 4 string`,
    `${carpet} | ${wool(k)}\nAction: craft 1 blue wool using 1 blue dye, 1 white wool`,
  ];
  assert.deepEqual(replies, [...round(2), ...round(1), `${carpet}\nAction: craft 3 blue carpet using 2 blue wool`]);
  // The same actions as the count frames: only the thought's layout differs.
  const actions = (frames: "count" | "tail") => stackPlan(parseOpening(OPENING), { frames }).map((t) => t.action);
  assert.deepEqual(actions("tail"), actions("count"));
  // Each frame's text after the name is a verbatim copy of what follows that name in its line.
  for (const r of replies) {
    for (const frame of r.split("\n")[0].replace("Thought: ", "").split(" | ")) {
      const tail = frame.replace(/ x\d+$/, "");
      assert.ok(OPENING.split("\n").some((l) => l.endsWith(` ${tail}`)), frame);
    }
  }
});

Deno.test("craftCount one: every craft writes 1, the game answers each turn as it does the line's yield, on all 544 tasks", () => {
  const members = tagMembers(tree);
  const lineGame = new TextCraftGame(tree), oneGame = new TextCraftGame(tree);
  let differ = 0;
  for (let i = 0; i < tree.goals.length; i++) {
    const opening = lineGame.reset(BigInt(i));
    oneGame.reset(BigInt(i));
    const line = stackPlan(parseOpening(opening), { tagMembers: members, frames: "tail" });
    const one = stackPlan(parseOpening(opening), { tagMembers: members, frames: "tail", craftCount: "one" });
    assert.equal(one.length, line.length);
    for (const [k, t] of one.entries()) {
      assert.equal(t.reply.split("\n")[0], line[k].reply.split("\n")[0], "the thought is the same");
      const craft = /^craft (\d+) (.+)$/.exec(t.action);
      if (craft) {
        assert.equal(craft[1], "1");
        // The action is "craft 1 " and the top frame, its xK left out.
        const top = t.reply.split("\n")[0].split(" | ").at(-1)!.replace(/^Thought: /, "").replace(/ x\d+$/, "");
        assert.equal(craft[2], top, `task ${i} turn ${k}`);
        if (t.action !== line[k].action) differ++;
      } else assert.equal(t.action, line[k].action);
      const a = lineGame.step(line[k].action), b = oneGame.step(t.action);
      assert.deepEqual(b, a, `task ${i} turn ${k}: ${t.action}`);
    }
  }
  assert.ok(differ > 500, `crafts whose line's yield is not 1: ${differ}`);
});
