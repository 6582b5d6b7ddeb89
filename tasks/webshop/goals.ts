/**
 * WebShop's goals (web_agent_site/engine/goal.py `get_human_goals` / `get_synthetic_goals`) and their order
 * (web_agent_text_env.py's `SimServer`: `random.seed(233); random.shuffle(goals)`), with Python's `random`
 * reproduced (src/util/py_random.ts), so goal `i` is the goal AgentGym's server resets to for session `i`.
 *
 * - Human goals: one per human instruction with attributes (those without are skipped), its options the listed
 *   values, weight 1.
 * - Synthetic goals: for each product with an attribute-file instruction, one goal per combination of its option
 *   values (option names sorted, `itertools.product` order), the instruction followed by
 *   ` with color: black, and size: large`; weight the mean of 1/(goals sharing each attribute).
 * - Price cap: of the first four multiples of 10 above the product's price, two drawn with `random.sample` and the
 *   larger kept (`, and price lower than 40.00 dollars`); under two such multiples (prices from $980): no cap
 *   (1000000) and no price text.
 *
 * The generator is seeded with 233 before the price draws (AgentGym's goal.py does so for synthetic goals; for human
 * goals upstream draws from Python's unseeded global generator, so Crucible's caps are one fixed draw of its rule),
 * and again with 233 before the shuffle.
 */
import { PyRandom } from "../../src/util/py_random.ts";
import type { Catalog, Product } from "./catalog.ts";
import { compareStr, formatFixed } from "./python.ts";
import type { RewardGoal } from "./reward.ts";

/** One goal. */
export interface Goal extends RewardGoal {
  asin: string;
  category: string;
  instructionText: string;
  /** Chance weight of a reset without a session id (upstream's `random_idx`). */
  weight: number;
}

/** Which goals: from human instructions or from the attribute file's synthetic ones. */
export type GoalKind = "human" | "synthetic";

const PRICE_RANGE = Array.from({ length: 99 }, (_, i) => 10 * (i + 1));

/** The price cap and its text for a product at `price`, drawing from `rng` as goal.py does. */
function priceCap(price: number, rng: PyRandom): { upper: number; text: string } {
  const range = PRICE_RANGE.filter((p) => p > price).slice(0, 4);
  if (range.length < 2) return { upper: 1000000, text: "" };
  const upper = Math.max(...rng.sample(range, 2));
  return { upper, text: `, and price lower than ${formatFixed(upper, 2)} dollars` };
}

/** Python's `str.strip('.')`. */
function stripDots(s: string): string {
  return s.replace(/^\.+|\.+$/g, "");
}

function base(p: Product) {
  return { asin: p.asin, category: p.category, query: p.query, name: p.name, productCategory: p.productCategory };
}

/** `get_human_goals`, with caps drawn from `rng`. */
function humanGoals(catalog: Catalog, rng: PyRandom): Goal[] {
  const goals: Goal[] = [];
  for (const p of catalog.products) {
    for (const ins of p.instructions ?? []) {
      if (ins.instruction_attributes.length === 0) continue;
      const cap = priceCap(catalog.prices.get(p.asin)!, rng);
      goals.push({
        ...base(p),
        instructionText: stripDots(ins.instruction) + cap.text,
        attributes: ins.instruction_attributes,
        priceUpper: cap.upper,
        goalOptions: ins.instruction_options,
        weight: 1,
      });
    }
  }
  return goals;
}

/** The combinations of a product's option values, first name slowest (`itertools.product`). */
function combinations(options: ReadonlyMap<string, readonly string[]>): Map<string, string>[] {
  const names = [...options.keys()].sort(compareStr);
  let out: Map<string, string>[] = [new Map()];
  for (const name of names) out = out.flatMap((m) => options.get(name)!.map((v) => new Map([...m, [name, v]])));
  return out;
}

/** `get_synthetic_goals`, with caps drawn from `rng`. */
function syntheticGoals(catalog: Catalog, rng: PyRandom): Goal[] {
  const goals: Goal[] = [];
  const counts = new Map<string, number>();
  for (const p of catalog.products) {
    if (p.instructionText === undefined || p.instructionText === null) continue;
    const attributes = p.instructionAttributes ?? [];
    if (attributes.length === 0) throw new SyntaxError(`Product ${p.asin} has an instruction but no attributes`);
    const cap = priceCap(catalog.prices.get(p.asin)!, rng);
    for (const goalOptions of combinations(p.options)) {
      const optionText = [...goalOptions].map(([k, v]) => `${k}: ${v}`).join(", and ");
      goals.push({
        ...base(p),
        instructionText: `${p.instructionText}${optionText ? ` with ${optionText}` : ""}${cap.text}`,
        attributes,
        priceUpper: cap.upper,
        goalOptions,
        weight: 0,
      });
      for (const a of attributes) counts.set(a, (counts.get(a) ?? 0) + 1);
    }
  }
  for (const g of goals) g.weight = g.attributes.reduce((s, a) => s + 1 / counts.get(a)!, 0) / g.attributes.length;
  return goals;
}

/** The goals of `kind` over `catalog`, in the order AgentGym's server indexes them. */
export function buildGoals(catalog: Catalog, kind: GoalKind): Goal[] {
  const rng = new PyRandom(233);
  const goals = kind === "human" ? humanGoals(catalog, rng) : syntheticGoals(catalog, rng);
  rng.seed(233);
  rng.shuffle(goals);
  return goals;
}

/** `random_idx`: an index drawn with chance proportional to its goal's weight (a reset without a session id). */
export function weightedIndex(goals: readonly Goal[], u: number): number {
  const total = goals.reduce((s, g) => s + g.weight, 0);
  let at = u * total;
  for (let i = 0; i < goals.length; i++) {
    at -= goals[i].weight;
    if (at < 0) return i;
  }
  return goals.length - 1;
}
