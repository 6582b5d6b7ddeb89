/**
 * WebShop's colour normalisation (web_agent_site/engine/normalize.py `normalize_color`): an option is replaced by the
 * first colour of WebShop's list that it contains, so "navy blue stripe" and "navy" both score as "navy" in the
 * option reward. A substring test, as upstream's, so "standard" normalises to "tan" and "washed" to "ash".
 */
import { pairRepr } from "./python.ts";

/** WebShop's colour list, in its order (the first match wins). */
export const COLOR_SET: readonly string[] = (
  "alabaster apricot aqua ash asphalt azure banana beige black blue blush bordeaux bronze brown " +
  "burgundy camel camo caramel champagne charcoal cheetah chestnut chocolate christmas coffee cognac " +
  "copper coral cranberry cream crystal dark denim eggplant elephant espresso fuchsia gold granite " +
  "grape graphite grass gray green grey heather indigo ivory ivy khaki lavender lemon leopard light " +
  "lilac lime magenta maroon mauve merlot midnight mint mocha multicolor mushroom mustard natural navy " +
  "nude olive orange peach pewter pink plum purple rainbow red rose royal rust sand sapphire seashell " +
  "silver skull slate steel stone stonewash sunflower tan taupe teal tiger turquoise violet walnut " +
  "wheat white wine yellow"
).split(" ");

/**
 * A goal option as the reward sees it: a plain value (human goals list their options as strings) or the
 * `(name, value)` pair that iterating a synthetic goal's option dict yields.
 */
export type GoalOption = string | { name: string; value: string };

/**
 * `normalize_color(o)`: a string becomes the first colour it contains; a pair becomes the first colour that equals
 * its name or its value (Python's `in` on a tuple tests membership, not substrings), else it is left as it is. What
 * comes back is the text thefuzz compares: a pair it was not replaced is `str((name, value))`, as thefuzz 0.19's
 * `asciidammit` turns a non-string into text.
 */
export function normalizeColor(option: GoalOption): string {
  if (typeof option === "string") return COLOR_SET.find((c) => option.includes(c)) ?? option;
  return COLOR_SET.find((c) => c === option.name || c === option.value) ?? pairRepr(option.name, option.value);
}
