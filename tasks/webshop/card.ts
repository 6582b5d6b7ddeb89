/**
 * What a WebShop base model's card says about its pretraining data (the Task hook `baseModelWords`): the synthetic
 * catalogues, the oracle's episodes and the copy strings. The card's frame (size, steps, results, rebuild) is
 * src/pretrain/base_model.ts's.
 */
import type { BaseModelWords, PretrainRecipe } from "../../src/task/task.ts";

/** The card's WebShop words for `recipe`. */
export function webShopCardWords(recipe: PretrainRecipe): BaseModelWords {
  const p = recipe.pretrain;
  return {
    vocabulary: "one token per word, and one per asin's letter run",
    trainedOn: "synthetic WebShop catalogues only.",
    data: `Every batch is generated on the fly from (seed ${p.seed}, step): each episode is a goal of a fresh generated
catalogue (160 products of 20 kinds over WebShop's five categories, with made-up brands, attributes, options and
prices, asins drawn from one pool of 600 so that which product an asin names changes every world), played by the
oracle through Crucible's WebShop (search with the instruction's words, open the product, pick its options, buy), in
WebShop's text-mode pages. A share of generic copy strings of asins, brands and option words (${p.copy_share} at the
start) is mixed in. The shipped catalogue (seed 0) is one seed in 2^31 and none of WebShop's own data is used; a fresh catalogue
can word an instruction as the shipped one does, for other products under other asins. Held-out goals are those of
one catalogue from seed ${p.eval_seed}, which training never draws from.`,
    heldOut: "synthetic catalogues' goals",
    names: "asins, brands and option words",
  };
}
