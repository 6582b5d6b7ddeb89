/**
 * What a TextCraft base model's card says about its pretraining data (the Task hook `baseModelWords`): the synthetic
 * crafting worlds, their stack-policy demonstrations, the copy strings and, when the recipe has them
 * (task_options.synthetic_misreads, synthetic_skipped_pushes), the recovery data. The card's frame (size, steps,
 * results, rebuild) is src/pretrain/base_model.ts's.
 */
import type { BaseModelWords, PretrainRecipe } from "../../src/task/task.ts";

/** The card's TextCraft words for `recipe`. */
export function textCraftCardWords(recipe: PretrainRecipe): BaseModelWords {
  const p = recipe.pretrain;
  return {
    vocabulary: "one token per item name",
    trainedOn: "synthetic crafting worlds only.",
    data:
      `Every batch is generated on the fly from (seed ${p.seed}, step): random recipe graphs of depth 1 to 4 with one to
four inputs per recipe, TextCraft's yields and counts, shared items, alternative recipes and up to ten distractor
lines, written in TextCraft's surface form; item names are drawn at random from the game's item vocabulary for every
world, so no name carries a recipe. Each world is played by the stack policy (a depth-first plan whose replies name
the items being crafted, their recipes and the action) through a simulator with TextCraft's rules and messages. A
share of generic copy strings of item names (${p.copy_share} at the start) is mixed in.${
        misreadText(recipe.taskOptions)
      } The generator never reads the
game's recipe tables, and no task of TextCraft's train or test split enters pretraining. Held-out worlds come from
seed ${p.eval_seed}, which training never draws from.`,
    heldOut: "synthetic worlds",
    names: "item names",
    links: "the counts, each with the word before it",
  };
}

// The recovery data's sentences, when the recipe has them (task_options.synthetic_misreads, synthetic_skipped_pushes).
function misreadText(options: Readonly<Record<string, unknown>>): string {
  const rate = options.synthetic_misreads, skips = options.synthetic_skipped_pushes;
  const percent = (x: number) => `${(100 * x).toFixed(0)}%`;
  let text = "";
  if (typeof rate === "number" && rate > 0) {
    text += ` Recovery data: before each turn, a ${
      percent(rate)
    } chance of a misread reply that the game refuses (kept as context, never trained), followed by the right one.`;
  }
  if (typeof skips === "number" && skips > 0) {
    text +=
      ` Before each turn that pushes a frame, a ${
        percent(skips)
      } chance of a skipped push: the thought ends before that frame and the reply fetches its item, which the game ` +
      `refuses, followed by the right reply (at most two misreads an episode).`;
  }
  return text;
}
