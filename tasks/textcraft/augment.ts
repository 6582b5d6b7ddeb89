/**
 * Fresh copies of TextCraft's oracle episodes for each SFT epoch (task_options.rename_items, drop_distractors and
 * skipped_pushes): items renamed by a random permutation, so that a model must read the command list rather than
 * memorise which items the training tasks use; a curriculum that leaves distractor lines out of the early epochs'
 * lists; and recovery turns, a skipped push refused by the game before the reply that makes it.
 */
import { CraftingTree } from "./game/tree.ts";
import type { AugmentContext, TextEpisode } from "../../src/task/task.ts";
import { recipeLines, stackFrames } from "./formats.ts";
import type { TextCraftOptions } from "./options.ts";
import { ItemRenamer } from "./rename.ts";
import { parseTextCraftAction } from "./rules.ts";
import { notFound } from "./game/game.ts";
import { MAX_MISREADS, pushesFrame, skippedPush } from "./worlds.ts";

/** A rewrite of one episode for one epoch. */
export type Augment = (episode: TextEpisode, c: AugmentContext) => TextEpisode;

/**
 * The rewrite the options ask for, or undefined when they ask for none. Draws from `c.rng` in a fixed order
 * (distractor lines, then whether to rename, then the permutation, then the skipped pushes), so a seeded generator
 * replays an epoch, and an option at 0 draws nothing.
 */
export async function textCraftAugment(o: TextCraftOptions): Promise<Augment | undefined> {
  // Only the stack layouts' replies have frames to skip (options.ts).
  const skips = stackFrames(o.oracle_format) ? o.skipped_pushes : 0;
  if (o.rename_items === 0 && o.drop_distractors === 0 && skips === 0) return undefined;
  const rewrite = await listRewrite(o);
  if (skips === 0) return rewrite;
  return (episode, c) => withSkippedPushes(rewrite ? rewrite(episode, c) : episode, skips, c);
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
