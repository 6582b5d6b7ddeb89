// SFT's recovery data on the real game. Skipped pushes (task_options.skipped_pushes): every inserted misread,
// played through TextCraft's own game at its place in the episode, gets exactly the refusal recorded for it and
// changes nothing after it; the right replies are the oracle's, in order; at most two an episode; none drawn at 0 or
// in a layout without frames. Refused crafts (task_options.refused_crafts): the whole rewritten episode replays
// through the game with every recorded answer, the craft is refused for a short input, the frame is gathered again
// and the goal is still made.
import assert from "node:assert/strict";
import type { TextEpisode } from "../../../src/task/task.ts";
import { Rng } from "../../../src/util/random.ts";
import {
  MAX_REGATHER,
  textCraftAugment,
  withRefusedCraft,
  withSkippedPushes,
} from "../../../tasks/textcraft/augment.ts";
import { demoReplies } from "../../../tasks/textcraft/demos.ts";
import { TextCraftGame } from "../../../tasks/textcraft/game/game.ts";
import { parseTextCraftOptions } from "../../../tasks/textcraft/options.ts";
import { parseTextCraftAction, TEXTCRAFT_SPLITS } from "../../../tasks/textcraft/rules.ts";
import { framesOf } from "../../../tasks/textcraft/worlds.ts";
import { tree } from "../../env/helpers.ts";

const actionOf = (reply: string) => {
  const p = parseTextCraftAction(reply);
  if (!("action" in p)) throw new Error(`no action in ${reply}`);
  return p.action;
};

/** Task `index`'s oracle episode in the stack_tail layout, played through TextCraft's game. */
function oracleEpisode(index: number): TextEpisode {
  const game = new TextCraftGame(tree);
  const opening = game.reset(BigInt(index));
  const replies = demoReplies(tree, index, { format: "stack_tail", craftCount: "one" });
  return { opening, turns: replies.map((reply) => ({ reply, observation: game.step(actionOf(reply)).observation })) };
}

Deno.test("skipped pushes: each is refused by TextCraft's game as recorded, and the oracle's replies go on unchanged", () => {
  let inserted = 0, episodes = 0;
  for (const index of TEXTCRAFT_SPLITS.train.slice(0, 400).filter((_, k) => k % 4 === 0)) {
    const plain = oracleEpisode(index);
    const rng = new Rng(index);
    const shown = withSkippedPushes(plain, 1, { rng });
    assert.deepEqual(shown.turns.filter((t) => !t.misread), plain.turns, `task ${index}: the oracle's turns`);
    assert.equal(shown.opening, plain.opening);
    const wrong = shown.turns.filter((t) => t.misread);
    assert.ok(wrong.length <= 2, `task ${index}: ${wrong.length} misreads`);
    // Replayed through the real game: the misreads get the recorded refusal and leave the later answers as they were.
    const game = new TextCraftGame(tree);
    game.reset(BigInt(index));
    shown.turns.forEach((t, i) => {
      const answer = game.step(actionOf(t.reply)).observation;
      assert.equal(answer, t.observation, `task ${index}, turn ${i}: ${t.reply}`);
      if (!t.misread) return;
      assert.match(answer, /^Could not find [a-z]/);
      assert.ok(!shown.turns[i + 1].misread, "the right reply follows");
      // The right reply's thought is this one's with one more frame: the item it fetched, with its line.
      const thought = (r: string) => r.slice(0, r.indexOf("\nAction: "));
      const item = /get \d+ (.+)$/.exec(actionOf(t.reply))![1];
      assert.ok(thought(shown.turns[i + 1].reply).startsWith(`${thought(t.reply)} | ${item} using `), t.reply);
    });
    inserted += wrong.length, episodes++;
  }
  // Depth-1 tasks push no frame; the deeper ones get one or two.
  assert.ok(inserted > 60, `${inserted} skipped pushes in ${episodes} episodes`);
});

Deno.test("skipped pushes: at 0 nothing is drawn, and a layout without frames gets none", async () => {
  const plain = oracleEpisode(TEXTCRAFT_SPLITS.train[200]);
  const rng = new Rng(3), untouched = new Rng(3);
  assert.deepEqual(withSkippedPushes(plain, 0, { rng }), plain);
  assert.equal(rng.float(), untouched.float(), "no draw at 0");
  assert.equal(await textCraftAugment(parseTextCraftOptions({ oracle_format: "stack_tail" })), undefined);
  const augment = await textCraftAugment(parseTextCraftOptions({ oracle_format: "stack_tail", skipped_pushes: 1 }));
  const a = augment!(plain, { rng: new Rng(9), epoch: 0, epochs: 2 });
  assert.ok(a.turns.some((t) => t.misread), "the augmentation inserts them");
  // A layout without frames gets nothing inserted (the main job's config keeps the option for any model).
  assert.equal(
    await textCraftAugment(parseTextCraftOptions({ oracle_format: "thought", skipped_pushes: 1 })),
    undefined,
  );
  const renamed = await textCraftAugment(
    parseTextCraftOptions({ oracle_format: "action", skipped_pushes: 1, rename_items: 1 }),
  );
  const actions = {
    opening: plain.opening,
    turns: plain.turns.map((t) => ({ ...t, reply: `Action: ${actionOf(t.reply)}` })),
  };
  assert.ok(!renamed!(actions, { rng: new Rng(9), epoch: 0, epochs: 2 }).turns.some((t) => t.misread));
});

/** Replays `shown` through TextCraft's game: every recorded answer must be the game's; returns the last reward. */
function replay(index: number, shown: TextEpisode): number {
  const game = new TextCraftGame(tree);
  game.reset(BigInt(index));
  let reward = 0;
  shown.turns.forEach((t, i) => {
    const step = game.step(actionOf(t.reply));
    assert.equal(step.observation, t.observation, `task ${index}, turn ${i}: ${t.reply}`);
    reward = step.reward;
  });
  return reward;
}

/**
 * Checks one episode rewritten by withRefusedCraft against its plain version: it replays through the game with the
 * recorded answers and crafts the goal; the refusal is the game's for a short input; after it come the frame's turns as
 * first gathered, then the craft; without the misreads, the turns are the oracle's with the first gathering (one input
 * short: g - 1 turns) before the refusal. Returns where the refusal is, the turns gathered again and the misreads, or
 * undefined when none was drawn.
 */
function checkRefusedCraft(index: number, plain: TextEpisode, shown: TextEpisode) {
  assert.equal(replay(index, shown), 1, `task ${index}: the goal is still crafted last`);
  const wrong = shown.turns.flatMap((t, i) => (t.misread ? [i] : []));
  if (wrong.length === 0) return undefined;
  const at = wrong[wrong.length - 1];
  assert.match(shown.turns[at].observation, /^Could not find enough items to craft minecraft:[a-z_]+$/);
  assert.ok(wrong.length <= 2, `task ${index}: one short get at most before the refused craft`);
  if (wrong.length === 2) assert.match(shown.turns[wrong[0]].observation, /^Got \d+ /);
  const g = shown.turns.findIndex((t, i) => i > at && t.reply === shown.turns[at].reply) - at - 1;
  assert.ok(g >= 1 && g <= MAX_REGATHER, `task ${index}: ${g} turns gathered again`);
  const trained = shown.turns.filter((t) => !t.misread);
  const q = shown.turns.slice(0, at + 1).filter((t) => !t.misread).length;
  assert.deepEqual([...trained.slice(0, q - (g - 1)), ...trained.slice(q)], plain.turns, `task ${index}`);
  const again = trained.slice(q, q + g);
  const first = trained.slice(q - (g - 1), q).map((t) => t.reply);
  assert.ok(first.every((r, k) => r === again[k].reply || r === again[k + 1].reply), `task ${index}: first gathering`);
  return { at, again, wrong };
}

Deno.test("refused crafts: the game refuses the craft as recorded, the frame is gathered again, the goal is made", () => {
  let refused = 0, short = 0, left = 0;
  for (const index of TEXTCRAFT_SPLITS.train.filter((_, k) => k % 3 === 0)) {
    const plain = oracleEpisode(index);
    const r = checkRefusedCraft(index, plain, withRefusedCraft(plain, 1, { rng: new Rng(index) }));
    if (!r) continue;
    refused++;
    if (r.wrong.length === 2) short++;
    else left++;
  }
  assert.ok(
    refused > 100 && short > 20 && left > 60,
    `${refused} refused crafts: ${short} short gets, ${left} left out`,
  );
});

Deno.test("refused crafts: later crafts take them too, gathering pushed frames again, and the game agrees", () => {
  // At chance 1 the first craft always takes it; at 0.3 later ones do, whose gatherings start after the first turn
  // and may hold deeper frames (a pushed input crafted again).
  let later = 0, deeper = 0, shown = 0;
  const frames = (r: string) => framesOf(r).length;
  for (const index of TEXTCRAFT_SPLITS.train.filter((i, k) => i >= 140 && k % 2 === 0)) {
    const plain = oracleEpisode(index);
    for (let seed = 0; seed < 3; seed++) {
      const episode = withRefusedCraft(plain, 0.3, { rng: new Rng(index * 10 + seed) });
      const r = checkRefusedCraft(index, plain, episode);
      if (!r) continue;
      shown++;
      if (r.again.some((t) => frames(t.reply) > frames(episode.turns[r.at].reply))) deeper++;
      if (episode.turns.slice(0, r.at).some((t) => !t.misread && t.reply.includes("\nAction: craft "))) later++;
    }
  }
  assert.ok(
    shown > 100 && later > 30 && deeper > 10,
    `${shown} refused crafts: ${later} after the first craft, ${deeper} with deeper frames`,
  );
});

Deno.test("refused crafts: at 0 nothing is drawn; the augmentation adds them to stack layouts only", async () => {
  const plain = oracleEpisode(TEXTCRAFT_SPLITS.train[200]);
  const rng = new Rng(3), untouched = new Rng(3);
  assert.deepEqual(withRefusedCraft(plain, 0, { rng }), plain);
  assert.equal(rng.float(), untouched.float(), "no draw at 0");
  const augment = await textCraftAugment(parseTextCraftOptions({ oracle_format: "stack_tail", refused_crafts: 1 }));
  const a = augment!(plain, { rng: new Rng(9), epoch: 0, epochs: 2 });
  assert.ok(a.turns.some((t) => /^Could not find enough items/.test(t.observation)), "the augmentation inserts one");
  assert.equal(
    await textCraftAugment(parseTextCraftOptions({ oracle_format: "thought", refused_crafts: 1 })),
    undefined,
  );
});
