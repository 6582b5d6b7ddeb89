/**
 * Fresh copies of TextCraft's oracle episodes for each SFT epoch (task_options.rename_items and drop_distractors):
 * items renamed by a random permutation, so that a model must read the command list rather than memorise which
 * items the training tasks use, and a curriculum that leaves distractor lines out of the early epochs' lists.
 */
import { CraftingTree } from "./game/tree.ts";
import type { AugmentContext, TextEpisode } from "../../src/task/task.ts";
import { recipeLines } from "./formats.ts";
import type { TextCraftOptions } from "./options.ts";
import { ItemRenamer } from "./rename.ts";
import { parseTextCraftAction } from "./rules.ts";

/** A rewrite of one episode for one epoch. */
export type Augment = (episode: TextEpisode, c: AugmentContext) => TextEpisode;

/**
 * The rewrite the options ask for, or undefined when they ask for none. Draws from `c.rng` in a fixed order
 * (distractor lines, then whether to rename, then the permutation), so a seeded generator replays an epoch.
 */
export async function textCraftAugment(o: TextCraftOptions): Promise<Augment | undefined> {
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
