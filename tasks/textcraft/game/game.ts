/**
 * One TextCraft environment: the goal, the command list and the inventory, with upstream's exact rules and
 * observation strings. The tree is shared and never written; everything that changes lives
 * here, so environments on one server never interfere.
 */
import { Rng } from "../../../src/util/random.ts";
import { idToName, nameToId, pyInt, pyRepr, pyStr, pyStrip, PythonError } from "./python.ts";
import type { CraftingTree, Recipe } from "./tree.ts";

/** What a step returns; `reward` is 1 only on the step that crafts the goal. */
export interface TextCraftStep {
  observation: string;
  reward: 0 | 1;
  done: boolean;
}

/** The seed of every reset: upstream reseeds with 42 each time, so an index always yields the same text. */
export const RESET_SEED = 42;
const MAX_DISTRACTORS = 10;
const USES_PER_INPUT = 10;

// Python's `.` matches anything but "\n"; anchored at the start only, as `re.match` is.
const CRAFT = /^craft ([^\n]*) using ([^\n]*)/;
const GET = /^get ([0-9]+) ([^\n]*)/;
const COUNTED = /^([0-9]+) ([^\n]*)/;

/** A failed action: its message is the observation. */
class ActionFailed extends Error {}

interface Typed {
  id: string | null;
  tag: string | null;
  count: bigint;
}

/** One environment's game state. */
export class TextCraftGame {
  readonly #tree: CraftingTree;
  #goal = "";
  #inventory = new Map<string, bigint>();

  /** A game over a shared tree; call `reset` before `step`. */
  constructor(tree: CraftingTree) {
    this.#tree = tree;
  }

  /** The goal's item id (`minecraft:stick`). */
  get goal(): string {
    return this.#goal;
  }

  /**
   * Starts task `index mod goals` (Python modulo, so negatives wrap): clears the inventory, picks the goal, and
   * builds the command list from the needed recipes and up to 10 distractors. Returns the initial observation.
   */
  reset(index: bigint): string {
    const n = BigInt(this.#tree.goals.length);
    this.#goal = this.#tree.goals[Number(((index % n) + n) % n)].id;
    this.#inventory = new Map();
    return `Crafting commands:\n${commandList(this.#tree, this.#goal).join("\n")}\n\nGoal: craft ${
      idToName(this.#goal)
    }.`;
  }

  /** Runs one command. A `PythonError` is what upstream would answer as `{"error": message}`. */
  step(action: string): TextCraftStep {
    try {
      const craft = CRAFT.exec(action);
      if (craft) return this.#craft(craft[1], craft[2]);
      const get = GET.exec(action);
      if (get) return this.#get(pyInt(get[1]), get[2]);
      if (action.startsWith("inventory")) return { observation: this.#inventoryText(), reward: 0, done: false };
      return { observation: `Could not execute ${action}`, reward: 0, done: false };
    } catch (e) {
      if (e instanceof ActionFailed) return { observation: e.message, reward: 0, done: false };
      throw e;
    }
  }

  #typed(name: string, count: bigint): Typed {
    const id = nameToId(name);
    return this.#tree.tags.has(id) ? { id: null, tag: id, count } : { id, tag: null, count };
  }

  #get(count: bigint, name: string): TextCraftStep {
    const item = this.#typed(name, count);
    const tree = this.#tree;
    if (tree.isCraftable(item.id ?? item.tag!) || item.id === null || !tree.items.has(item.id)) {
      throw new ActionFailed(notFound(name));
    }
    this.#add(item.id, count);
    const done = item.id === this.#goal;
    return { observation: `Got ${pyStr(count)} ${name}`, reward: done ? 1 : 0, done };
  }

  #craft(outputText: string, inputsText: string): TextCraftStep {
    const m = COUNTED.exec(outputText);
    const output = m ? this.#typed(m[2], pyInt(m[1])) : this.#typed(outputText, 1n);
    const given = inputsText.split(",").map((segment) => {
      const s = pyStrip(segment);
      const c = COUNTED.exec(s);
      if (!c) throw new ActionFailed(`Wrong item format: ${s}`);
      return this.#typed(c[2], pyInt(c[1]));
    });
    // The inventory check is by exact id, so a tag input (`2 planks`) never passes it.
    if (given.some((x) => x.id === null || (this.#inventory.get(x.id) ?? -1n) < x.count)) {
      throw new ActionFailed(`Could not find enough items to craft ${output.id ?? "None"}`);
    }
    const recipe = output.id === null ? undefined : this.#candidates(output.id).find((r) => this.#matches(r, given));
    if (recipe === undefined) {
      const tag = output.tag === null ? "None" : pyRepr(output.tag);
      const id = output.id === null ? "None" : pyRepr(output.id);
      throw new ActionFailed(
        `Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=${tag}, item_id=${id}), ` +
          `count=${pyStr(output.count)})`,
      );
    }
    for (const x of given) {
      const held = this.#inventory.get(x.id!);
      // Python's KeyError, reachable only when one id is given twice; its text is the key's repr.
      if (held === undefined) throw new PythonError(pyRepr(x.id!));
      if (held - x.count === 0n) this.#inventory.delete(x.id!);
      else this.#inventory.set(x.id!, held - x.count);
    }
    this.#add(recipe.output, BigInt(recipe.count));
    const done = recipe.output === this.#goal;
    return { observation: `Crafted ${recipe.count} ${recipe.output}`, reward: done ? 1 : 0, done };
  }

  /**
   * The recipes tried for an output, in order. Upstream's recipe walk appends to the tree's own lists, so once a
   * server has reset every task, an item's list also holds every recipe below it, depth first: a command that names
   * an item but gives the inputs of one of its ingredients' recipes crafts that ingredient. Reproduced as that
   * steady state (`craft 1 stick using 1 oak logs` gives `Crafted 4 minecraft:oak_planks`).
   */
  #candidates(output: string): Recipe[] {
    if (!this.#tree.itemRecipes.has(output)) return [];
    return [...new Set(this.#tree.traverse(output))];
  }

  // Every recipe input needs exactly one given counterpart with the same count, and nothing may be left over. A
  // tag input takes the first given item of that tag; a wrong count there fails the recipe.
  #matches(recipe: Recipe, given: readonly Typed[]): boolean {
    const left = [...given];
    for (const input of recipe.inputs) {
      const i = left.findIndex((x) =>
        input.tag ? x.tag === input.id || (x.id !== null && this.#tree.tagOf.get(x.id) === input.id) : x.id === input.id
      );
      if (i < 0 || left[i].count !== BigInt(input.count)) return false;
      left.splice(i, 1);
    }
    return left.length === 0;
  }

  #add(id: string, count: bigint): void {
    this.#inventory.set(id, (this.#inventory.get(id) ?? 0n) + count);
  }

  #inventoryText(): string {
    if (this.#inventory.size === 0) return "Inventory: You are not carrying anything.";
    let text = "Inventory: ";
    for (const [id, count] of this.#inventory) text += `[${idToName(id)}] (${pyStr(count)}) `;
    return text;
  }
}

/**
 * The command lines of a task: every recipe below the goal (all alternatives), plus up to 10 distractors drawn from
 * the recipes that share an input with them, shuffled. Deterministic: one generator seeded with `RESET_SEED`.
 */
export function commandList(tree: CraftingTree, goal: string, rng: Rng = new Rng(RESET_SEED)): string[] {
  const needed = tree.traverse(goal);
  const neededText = new Set(needed.map((r) => r.text));
  const pool = new Set<string>();
  for (const r of needed) {
    for (const x of r.inputs) {
      const uses = tree.uses.get(x.id) ?? [];
      for (const d of sample(rng, uses, Math.min(uses.length, USES_PER_INPUT))) {
        if (!neededText.has(d.text)) pool.add(d.text);
      }
    }
  }
  const distractors = sample(rng, [...pool], Math.min(pool.size, MAX_DISTRACTORS));
  return rng.shuffle([...neededText, ...distractors]);
}

/** `k` distinct elements of `items` in random order (a partial Fisher-Yates on a copy). */
function sample<T>(rng: Rng, items: readonly T[], k: number): T[] {
  const a = [...items];
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(a.length - i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, k);
}

/**
 * TextCraft's answer to `craft N X using ...` when an input is short in the inventory (X an item, not a tag):
 * `Could not find enough items to craft minecraft:x`.
 */
export function notEnough(name: string): string {
  return `Could not find enough items to craft ${nameToId(name)}`;
}

/** TextCraft's answer to `get N X` when X is not to be had that way (X is crafted, or no item): `Could not find X`. */
export function notFound(name: string): string {
  return `Could not find ${name}`;
}
