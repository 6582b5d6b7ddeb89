/**
 * The oracle: a shortest action sequence that crafts a task's goal, for tests and for supervised warm-start data.
 *
 * A plan fixes one recipe per item and one member per tag (`oak planks` for `planks`). Its cost is one `get` per
 * base item (any quantity fits in one action) plus, per crafted item, ceil(demand / recipe count) crafts, demand
 * flowing from the goal down. Every such plan is enumerated and the cheapest kept (ties: first in load order), so
 * the sequence is shortest among plans that do not mix two recipes for one item, which never pays here: each
 * craft yields at most the larger recipe count and a second recipe only adds inputs to fetch.
 */
import { idToName } from "./game/python.ts";
import type { CraftingTree, Recipe } from "./game/tree.ts";

/** A plan's actions, gets first, then crafts with every input before its consumer. */
export interface OraclePlan {
  /** The item the plan crafts. */
  goal: string;
  /** The actions in order: `get 1 oak logs`, then `craft 4 oak planks using 1 oak logs`, ... */
  actions: string[];
}

type Choice = Map<string, Recipe | string>;

/** A shortest action sequence for task `index` (taken mod the number of goals, as `/reset` does). */
export function solveTask(tree: CraftingTree, index: number): OraclePlan {
  const n = tree.goals.length;
  return solveGoal(tree, tree.goals[((index % n) + n) % n].id);
}

/** A shortest action sequence that ends by crafting `goal` (an item id such as `minecraft:stick`). */
export function solveGoal(tree: CraftingTree, goal: string): OraclePlan {
  if (!tree.itemRecipes.has(goal)) {
    throw new RangeError(`solveGoal needs a craftable item id such as "minecraft:stick", got "${goal}"`);
  }
  let best: { cost: number; actions: string[] } | null = null;
  const search = (choice: Choice) => {
    const open = firstOpenChoice(tree, goal, choice);
    if (open === null) {
      const plan = planOf(tree, goal, choice);
      if (best === null || plan.cost < best.cost) best = plan;
      return;
    }
    for (const option of open.options) search(new Map(choice).set(open.name, option));
  };
  search(new Map());
  return { goal, actions: best!.actions };
}

// Walks the plan from the goal and returns the first item or tag whose recipe or member is not chosen yet.
function firstOpenChoice(tree: CraftingTree, goal: string, choice: Choice) {
  const seen = new Set<string>();
  const stack = [goal];
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    if (tree.tags.has(name)) {
      const member = choice.get(name) as string | undefined;
      if (member === undefined) return { name, options: membersOf(tree, name) };
      stack.push(member);
      continue;
    }
    const recipes = tree.itemRecipes.get(name) ?? [];
    if (recipes.length === 0) continue;
    const r = (choice.get(name) as Recipe | undefined) ?? (recipes.length === 1 ? recipes[0] : undefined);
    if (r === undefined) return { name, options: recipes };
    for (const x of r.inputs) stack.push(x.id);
  }
  return null;
}

function membersOf(tree: CraftingTree, tag: string): string[] {
  return [...tree.tagOf].filter(([, t]) => t === tag).map(([item]) => item);
}

function planOf(tree: CraftingTree, goal: string, choice: Choice): { cost: number; actions: string[] } {
  const recipeOf = (id: string) => {
    const recipes = tree.itemRecipes.get(id);
    return recipes === undefined ? undefined : (choice.get(id) as Recipe | undefined) ?? recipes[0];
  };
  const resolve = (x: { id: string; tag: boolean }) => (x.tag ? choice.get(x.id) as string : x.id);
  // Post-order: every item after all of its inputs.
  const order: string[] = [];
  const done = new Set<string>();
  const visit = (id: string) => {
    if (done.has(id)) return;
    done.add(id);
    for (const x of recipeOf(id)?.inputs ?? []) visit(resolve(x));
    order.push(id);
  };
  visit(goal);
  const demand = new Map<string, number>([[goal, 1]]);
  const crafts = new Map<string, number>();
  for (const id of [...order].reverse()) {
    const r = recipeOf(id);
    if (r === undefined) continue;
    const times = Math.ceil(demand.get(id)! / r.count);
    crafts.set(id, times);
    for (const x of r.inputs) demand.set(resolve(x), (demand.get(resolve(x)) ?? 0) + times * x.count);
  }
  const actions: string[] = [];
  for (const id of order) if (!crafts.has(id)) actions.push(`get ${demand.get(id)} ${idToName(id)}`);
  for (const id of order) {
    const r = recipeOf(id);
    if (r === undefined) continue;
    const ins = r.inputs.map((x) => `${x.count} ${idToName(resolve(x))}`).join(", ");
    for (let i = 0; i < crafts.get(id)!; i++) actions.push(`craft ${r.count} ${idToName(id)} using ${ins}`);
  }
  return { cost: actions.length, actions };
}
