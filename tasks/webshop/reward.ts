/**
 * WebShop's reward for a purchase (web_agent_site/engine/goal.py `get_reward`), every part:
 *
 * - type: 1, or 0.5 when neither the query, nor two or more product-category levels, nor more than a fifth of the
 *   goal name's nouns match; 0.1 when under a tenth of those nouns match; 0 when none does;
 * - attributes: a goal attribute counts when some product attribute has thefuzz `token_set_ratio` > 85 with it, else
 *   when it is a substring of the lower-cased title, bullet points (joined by spaces) or description;
 * - options: a goal option counts when some chosen option value has `token_set_ratio` > 85 with it, both after colour
 *   normalisation (a synthetic goal's options are iterated as `(name, value)` pairs, as upstream's `.items()` does);
 * - price: the price is at most the goal's `price_upper`;
 *
 * total = (attributes + options + price) / (goal attributes + goal options + 1), times the type reward. The ratio is
 * fuzzball's Levenshtein ratio (python-Levenshtein's, which thefuzz 0.19 uses when installed, as AgentGym's server
 * installs it) over strings processed as thefuzz processes them (python.ts `fullProcess`).
 *
 * @example
 * ```ts
 * const { reward } = webshopReward(product, goal, { price: 12.5, options: new Map([["color", "black"]]) });
 * ```
 */
import { type GoalOption, normalizeColor } from "./normalize.ts";
import { nounTokens } from "./nouns.ts";
import { WEBSHOP_PACKAGES } from "./packages.ts";
import { fullProcess, pyStrip } from "./python.ts";

// fuzzball loads with this module, by packages.ts's specifier (held in a variable: only WebShop's commands fetch it).
const spec: string = WEBSHOP_PACKAGES.fuzzball;
const fuzzball: typeof import("npm:fuzzball@2.2.6") = await import(spec);

/** What the reward reads of the purchased product. */
export interface RewardProduct {
  query: string;
  productCategory: string;
  name: string;
  title: string;
  attributes: readonly string[];
  bulletPoints: readonly string[];
  description: string;
}

/** What the reward reads of the goal. */
export interface RewardGoal {
  query: string;
  productCategory: string;
  name: string;
  attributes: readonly string[];
  /** A synthetic goal's options by name (iterated as pairs), or a human goal's list of values. */
  goalOptions: ReadonlyMap<string, string> | readonly string[];
  priceUpper: number;
}

/** The reward and its parts, as upstream's `verbose=True` info holds them. */
export interface RewardInfo {
  reward: number;
  r_type: number;
  r_att: number;
  w_att: number;
  query_match: boolean;
  category_match: boolean;
  title_score: number;
  r_option?: number;
  w_option?: number;
  r_price?: boolean;
  w_price?: number;
}

/** thefuzz 0.19's `fuzz.token_set_ratio(a, b)` (force_ascii, full_process). */
export function tokenSetRatio(a: string, b: string): number {
  const p = fullProcess(a), q = fullProcess(b);
  if (p === "" || q === "") return 0;
  return fuzzball.token_set_ratio(p, q, { full_process: false });
}

/** `get_type_reward`: whether the purchase is the goal's kind of product. */
export function typeReward(product: RewardProduct, goal: RewardGoal) {
  const queryMatch = product.query === goal.query;
  const levels = (c: string) => new Set(c.split("›").map(pyStrip));
  const goalLevels = levels(goal.productCategory);
  const categoryMatch = [...levels(product.productCategory)].filter((x) => goalLevels.has(x)).length >= 2;
  const bought = new Set(nounTokens(product.name));
  const wanted = new Set(nounTokens(goal.name));
  const titleScore = wanted.size === 0 ? 0.2 : [...wanted].filter((w) => bought.has(w)).length / wanted.size;
  let rType = queryMatch || categoryMatch || titleScore > 0.2 ? 1 : 0.5;
  if (titleScore < 0.1) rType = 0.1;
  if (titleScore === 0) rType = 0;
  return { r_type: rType, query_match: queryMatch, category_match: categoryMatch, title_score: titleScore };
}

/** `get_attribute_reward`: how many goal attributes the product has (by attribute list, else by its texts). */
export function attributeMatches(product: RewardProduct, goal: Pick<RewardGoal, "attributes">): number {
  let matches = 0;
  const title = product.title.toLowerCase(), bullets = product.bulletPoints.join(" ").toLowerCase();
  const description = product.description.toLowerCase();
  for (const g of goal.attributes) {
    if (product.attributes.some((p) => tokenSetRatio(p, g) > 85)) matches++;
    else if (title.includes(g) || bullets.includes(g) || description.includes(g)) matches++;
  }
  return matches;
}

/** A goal's options as the option reward iterates them. */
export function goalOptionList(options: RewardGoal["goalOptions"]): GoalOption[] {
  return Array.isArray(options)
    ? [...options as readonly string[]]
    : [...(options as ReadonlyMap<string, string>)].map(([name, value]) => ({ name, value }));
}

/** `get_option_reward`: how many goal options some chosen option matches. */
export function optionMatches(chosen: readonly string[], goal: readonly GoalOption[]): number {
  const bought = chosen.map(normalizeColor);
  return goal.map(normalizeColor).filter((g) => bought.some((p) => tokenSetRatio(p, g) > 85)).length;
}

/** `get_reward(product, goal, price, options, verbose=True)`. */
export function webshopReward(
  product: RewardProduct,
  goal: RewardGoal,
  bought: { price: number; options: ReadonlyMap<string, string> },
): RewardInfo {
  const type = typeReward(product, goal);
  const priceOk = goal.priceUpper > 0 ? bought.price <= goal.priceUpper : undefined;
  const nAttr = goal.attributes.length;
  const attrMatches = attributeMatches(product, goal);
  const options = goalOptionList(goal.goalOptions);
  const optMatches = optionMatches([...bought.options.values()], options);
  const denominator = nAttr + options.length + 1;
  // Python adds a bool as 0/1; a price_upper <= 0 makes r_price None, and None in the sum raises there. Goals never
  // have one (1000000 stands for "no cap").
  const total = (attrMatches + optMatches + (priceOk ? 1 : 0)) / denominator * type.r_type;
  return {
    reward: total,
    ...type,
    r_att: attrMatches / nAttr,
    w_att: nAttr / denominator,
    ...(options.length > 0 ? { r_option: optMatches / options.length, w_option: options.length / denominator } : {}),
    ...(priceOk !== undefined ? { r_price: priceOk, w_price: 1 / denominator } : {}),
  };
}
