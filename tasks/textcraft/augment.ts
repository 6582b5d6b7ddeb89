/**
 * Fresh copies of TextCraft's oracle episodes for each SFT epoch (task_options.rename_items, drop_distractors,
 * skipped_pushes and refused_crafts): items renamed by a random permutation, so that a model must read the command
 * list rather than memorise which items the training tasks use; a curriculum that leaves distractor lines out of the
 * early epochs' lists; and recovery turns: a skipped push refused by the game before the reply that makes it, and a
 * craft refused for a short input followed by the frame gathered again.
 */
import { CraftingTree } from "./game/tree.ts";
import type { AugmentContext, TextEpisode } from "../../src/task/task.ts";
import { recipeLines, stackFrames } from "./formats.ts";
import type { TextCraftOptions } from "./options.ts";
import { ItemRenamer } from "./rename.ts";
import { parseTextCraftAction } from "./rules.ts";
import { type CommandLine, parseCommandLine } from "./stack.ts";
import { notEnough, notFound } from "./game/game.ts";
import { framesOf, MAX_MISREADS, pushesFrame, skippedPush } from "./worlds.ts";

/** A rewrite of one episode for one epoch. */
export type Augment = (episode: TextEpisode, c: AugmentContext) => TextEpisode;

/**
 * The rewrite the options ask for, or undefined when they ask for none. Draws from `c.rng` in a fixed order
 * (distractor lines, then whether to rename, then the permutation, then the skipped pushes, then the refused craft),
 * so a seeded generator replays an epoch, and an option at 0 draws nothing.
 */
export async function textCraftAugment(o: TextCraftOptions): Promise<Augment | undefined> {
  // Only the stack layouts' replies have frames to skip or gather again (options.ts).
  const frames = stackFrames(o.oracle_format) !== undefined;
  const skips = frames ? o.skipped_pushes : 0, refusals = frames ? o.refused_crafts : 0;
  if (o.rename_items === 0 && o.drop_distractors === 0 && skips === 0 && refusals === 0) return undefined;
  const rewrite = await listRewrite(o);
  if (skips === 0 && refusals === 0) return rewrite;
  return (episode, c) => {
    const listed = rewrite ? rewrite(episode, c) : episode;
    return withRefusedCraft(skips > 0 ? withSkippedPushes(listed, skips, c) : listed, refusals, c);
  };
}

/**
 * `episode` with a skipped push (worlds.ts, skippedPush) before each turn that pushes a frame, with chance `chance`,
 * at most MAX_MISREADS an episode. The refusal is the game's for a crafted item, whatever the item is called: under a
 * renaming the episode's world is the renamed one.
 */
export function withSkippedPushes(episode: TextEpisode, chance: number, c: Pick<AugmentContext, "rng">): TextEpisode {
  const turns: TextEpisode["turns"] = [];
  let misreads = 0;
  episode.turns.forEach((t, i) => {
    const previous = episode.turns[i - 1]?.reply;
    if (
      chance > 0 && !t.misread && misreads < MAX_MISREADS && pushesFrame(previous, t.reply) && c.rng.float() < chance
    ) {
      const wrong = skippedPush(t.reply, (_action, item) => notFound(item));
      if (wrong) turns.push({ ...wrong, misread: true }), misreads++;
    }
    turns.push(t);
  });
  return { ...episode, turns };
}

/** Most turns of a frame gathered again after a refused craft (the episode must stay near the response budget). */
export const MAX_REGATHER = 8;

/**
 * `episode` with at most one refused craft: before a craft turn, with chance `chance` for each craft that can take
 * one, the frame's gathering is shown with one input short (a get of that input with a smaller count, or the frame's
 * last get left out), the craft is refused (`Could not find enough items to craft minecraft:x`), and the right reply
 * gathers the frame again from its first input: the same turns as the first time, then the craft. Over-fetching is
 * harmless in TextCraft, and the rule is one a small model can follow: after a refused craft, start the top frame
 * over. The short get and the refused craft are kept as context with no loss on them (`misread`). A gathering that
 * already holds a misread (a skipped push) takes no refusal, nor does one longer than MAX_REGATHER turns.
 */
export function withRefusedCraft(episode: TextEpisode, chance: number, c: Pick<AugmentContext, "rng">): TextEpisode {
  if (chance === 0) return episode;
  const turns = episode.turns;
  const plays = turns.map((t) => played(t.reply));
  for (let j = 0; j < turns.length; j++) {
    const craft = plays[j].craft;
    if (!craft || turns[j].misread) continue;
    const from = gatheringStart(plays, j);
    const gathering = turns.slice(from, j);
    if (gathering.length === 0 || gathering.length > MAX_REGATHER || gathering.some((t) => t.misread)) continue;
    const shorts = shortInputs(plays, from, j);
    if (shorts.length === 0 || c.rng.float() >= chance) continue;
    const short = shorts[c.rng.int(shorts.length)];
    const first = gathering.flatMap((t, k) => {
      if (from + k !== short.at) return [t];
      if (short.count < 2) return []; // the frame's last get, left out
      const fewer = 1 + c.rng.int(short.count - 1);
      const action = `get ${fewer} ${short.item}`;
      const reply = `Thought: ${plays[short.at].frames.join(" | ")}\nAction: ${action}`;
      return [{ reply, observation: `Got ${fewer} ${short.item}`, misread: true }];
    });
    const refused = { reply: turns[j].reply, observation: notEnough(craft.output), misread: true };
    return { ...episode, turns: [...turns.slice(0, from), ...first, refused, ...gathering, ...turns.slice(j)] };
  }
  return episode;
}

/** What a stack reply holds: its frames, and its action as a get (count, item) or a craft (its line), if either. */
interface Played {
  frames: string[];
  get?: { count: number; item: string };
  craft?: CommandLine;
}

function played(reply: string): Played {
  const at = reply.lastIndexOf("\nAction: ");
  const action = at < 0 ? "" : reply.slice(at + "\nAction: ".length);
  const get = /^get (\d+) (.+)$/.exec(action);
  return {
    frames: framesOf(reply),
    get: get ? { count: Number(get[1]), item: get[2] } : undefined,
    craft: action.startsWith("craft ") ? parseCommandLine(action) : undefined,
  };
}

/**
 * The first turn of the gathering that craft turn `j` ends: the turns just before it whose stacks start with its
 * whole stack, frame for frame. The frames carry the crafts still to make (`xK`), so an earlier craft of the same
 * frame, which wrote a larger K, ends the walk, as does the parent's frame of an earlier craft of the parent.
 */
function gatheringStart(plays: readonly Played[], j: number): number {
  const stack = plays[j].frames;
  let i = j;
  while (i > 0) {
    const frames = plays[i - 1].frames;
    if (frames.length < stack.length || stack.some((f, k) => frames[k] !== f)) break;
    i--;
  }
  return i;
}

/**
 * The gets of the top frame in turns [from, j) that can come up short, so that the craft is refused: an item that no
 * earlier turn of the episode fetched (none can be left over) and no craft before j uses (nothing in between fails).
 * With a count of 2 or more, a smaller count can be fetched (`count` the right one); the last turn can be left out
 * (`count` 0).
 */
function shortInputs(plays: readonly Played[], from: number, j: number): { at: number; item: string; count: number }[] {
  const depth = plays[j].frames.length;
  const out: { at: number; item: string; count: number }[] = [];
  for (let i = from; i < j; i++) {
    const get = plays[i].get;
    if (!get || plays[i].frames.length !== depth) continue;
    const { count, item } = get;
    if (plays.slice(0, i).some((p) => p.get?.item === item)) continue;
    if (plays.slice(i + 1, j).some((p) => p.craft?.inputs.some((x) => x.name === item))) continue;
    if (i === j - 1) out.push({ at: i, item, count: 0 });
    if (count >= 2) out.push({ at: i, item, count });
  }
  return out;
}

/** The command-list rewrites (distractors left out, items renamed), or undefined when neither is asked for. */
async function listRewrite(o: TextCraftOptions): Promise<Augment | undefined> {
  if (o.rename_items === 0 && o.drop_distractors === 0) return undefined;
  const renamer = o.rename_items > 0 ? new ItemRenamer(await CraftingTree.load()) : undefined;
  return (episode, c) => {
    const actions = episode.turns.map((t) => {
      const p = parseTextCraftAction(t.reply);
      return "action" in p ? p.action : "";
    });
    const used = new Set(recipeLines(episode.opening, actions));
    const last = Math.max(1, Math.ceil(c.epochs) - 1);
    const drop = o.drop_distractors * Math.max(0, 1 - c.epoch / last);
    const opening = drop > 0
      ? episode.opening.split("\n").filter((l) => !l.startsWith("craft ") || used.has(l) || c.rng.float() >= drop)
        .join("\n")
      : episode.opening;
    if (!renamer || c.rng.float() >= o.rename_items) return { ...episode, opening };
    const map = renamer.permutation(c.rng);
    const edit = (text: string) => renamer.apply(text, map);
    return {
      opening: edit(opening),
      turns: episode.turns.map((t) => ({ reply: edit(t.reply), observation: edit(t.observation) })),
    };
  };
}
