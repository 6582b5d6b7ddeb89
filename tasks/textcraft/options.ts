/**
 * TextCraft's own settings, under `task_options` in a run config. The trainer passes them through without reading
 * them; this module checks them, so an unknown key or a bad value stops the run with the key's path.
 */
import { z } from "zod";
import { ORACLE_FORMATS } from "./formats.ts";

const share = () => z.number().finite().min(0).max(1);

const Schema = z.strictObject({
  /** The layout of the oracle's replies in supervised data (formats.ts). */
  oracle_format: z.enum(ORACLE_FORMATS).default("thought"),
  /**
   * The count the stack layouts' craft actions write (stack.ts, CraftCount): `line`, the command line's yield, or
   * `one`, always 1, which the game answers alike (it crafts the recipe's yield whatever the count says).
   */
  craft_count: z.enum(["line", "one"]).default("line"),
  /**
   * Share of oracle episodes whose items are renamed by a random permutation each epoch, so that the model learns
   * to read the command list instead of memorising the training items.
   */
  rename_items: share().default(0),
  /**
   * A curriculum over the command list: the share of distractor lines left out in the first epoch, falling
   * linearly to none in the last, so that early steps learn the lookup on short lists.
   */
  drop_distractors: share().default(0),
  /**
   * SFT's recovery data: the chance, before each turn of an oracle episode whose reply pushes a frame, of a misread
   * that skips the push and fetches the frame's item instead, answered with the game's refusal (`Could not find X`),
   * kept as context but never trained, with the right reply after it (augment.ts; at most two an episode, drawn afresh
   * each epoch). Neither the oracle nor the model's warm start ever fails otherwise, so without it the model has never
   * seen a reply after a refusal, and it repeats the refused one. Only the stack layouts (oracle_format stack,
   * stack_tail, which a model's crucible.json may set) have frames; with another layout it inserts nothing, so the
   * main job's config can keep it for models that write other replies.
   */
  skipped_pushes: share().default(0),
  /**
   * SFT's recovery data for a refused craft: for each craft of an oracle episode in turn, until one is drawn, the
   * chance that the frame's gathering comes up one input short (a get of the frame's own with a smaller count, or its
   * last get left out) and the craft is refused (`Could not find enough items to craft minecraft:x`), kept as context
   * but never trained, followed by the frame gathered again from its first input and crafted (augment.ts; one an
   * episode at most, so early crafts take most of them; drawn afresh each epoch). A short input is the commonest way
   * the warm start fails at depth 3 (there mostly a frame crafted too few times, which this data does not play: the
   * recovery, gathering the top frame again, is the same), and it then repeats the refused craft. Stack layouts only,
   * as skipped_pushes.
   */
  refused_crafts: share().default(0),
  /**
   * Pretraining's recovery data: the chance, before each turn of a synthetic episode, of a misread reply (a
   * neighbouring line's inputs or count, or a get of an item that must be crafted) that the game refuses, kept as
   * context but never trained, followed by the right reply (worlds.ts). 0 keeps the episodes as they were.
   */
  synthetic_misreads: share().default(0),
  /**
   * Pretraining's recovery data for a skipped push: the chance, before each turn of a synthetic episode whose reply
   * pushes a frame, of a misread whose thought ends before that frame and which fetches the item the frame would
   * craft; the game refuses (`Could not find X`) and the right reply pushes the frame (worlds.ts, skippedPush). It is
   * the base model's commonest error, and the one the main job's depth-3 episodes repeat to the round limit. Counted
   * with synthetic_misreads' (two an episode at most); 0 keeps the episodes as they were.
   */
  synthetic_skipped_pushes: share().default(0),
  /**
   * The goal depths of RL's synthetic worlds (data.synthetic_prompts, rl_worlds.ts): world k has depth
   * rl_world_depths[k mod length], so a step's worlds walk the list in turn; repeat a depth to weight it.
   */
  rl_world_depths: z.array(z.number().int().min(1).max(4)).min(1).default([1, 2, 3, 4]),
  /**
   * RL's progress reward, paid by Crucible's embedded server (shaping.ts): besides upstream's 1 for the goal, a
   * failure earns this share times the fraction of the plan's intermediate items it crafted (each item of the goal's
   * recipe tree once, never an item off the tree), so a group at depth 3 where no episode finishes still differs in
   * reward. Below 1, so success (a reward of 1) keeps upstream's rule and the evaluation's success rates are
   * unchanged. 0 serves upstream's reward.
   */
  progress_reward: z.number().finite().min(0).lt(1).default(0),
  /**
   * RL's penalty for loops, paid by the embedded server (shaping.ts): taken from a failure's score for each step whose
   * action is the one the game refused on the step just before (a stuck policy repeats one refused action to the
   * round limit). A success still scores 1. 0 serves upstream's reward.
   */
  repeat_penalty: share().default(0),
});

/** TextCraft's task options, defaults filled. */
export type TextCraftOptions = z.infer<typeof Schema>;

/** The option keys with their defaults, for help texts and error messages. */
export const TEXTCRAFT_OPTION_KEYS = Object.keys(Schema.shape);

/** Checks `task_options` for TextCraft; errors name the key (`task_options.rename_items`) and the valid keys. */
export function parseTextCraftOptions(raw: unknown): TextCraftOptions {
  const r = Schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue.code === "unrecognized_keys") {
    throw new TypeError(
      `Unknown TextCraft option "task_options.${issue.keys[0]}"; the options are ${TEXTCRAFT_OPTION_KEYS.join(", ")}`,
    );
  }
  throw new TypeError(`TextCraft option "task_options.${issue.path.join(".")}": ${issue.message}`);
}
