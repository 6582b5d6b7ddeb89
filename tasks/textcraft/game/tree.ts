/**
 * TextCraft's crafting tree: the recipe facts of `recipes.tsv` loaded under upstream's rules —
 * decompression recipes dropped, groups turned into tags, recipes that would close a loop skipped, tags that no
 * crafted item belongs to turned into pseudo-items — plus depths, the goal list and the recipe traversals that
 * build a task's command list. Ids keep upstream's `minecraft:` prefix so that error strings come out unchanged.
 */
import { idToName } from "./python.ts";
import RECIPES from "./recipes.tsv" with { type: "text" };

/** One recipe input: an item id, or a tag id when `tag` is true (`minecraft:planks`, `minecraft:wool`). */
export interface Ingredient {
  /** The item id (`minecraft:stick`) or tag id (`minecraft:planks`). */
  readonly id: string;
  /** Whether `id` names a tag (any item of the group will do). */
  readonly tag: boolean;
  /** How many are needed. */
  readonly count: number;
}

/** A registered recipe. `tag` is `minecraft:<group>` or null; it may equal `output` (then it makes no tag). */
export interface Recipe {
  /** The item id the recipe makes. */
  readonly output: string;
  /** How many one craft makes. */
  readonly count: number;
  /** The tag group the output belongs to (`minecraft:planks`), or null. */
  readonly tag: string | null;
  /** What one craft consumes. */
  readonly inputs: readonly Ingredient[];
  /** The command line shown to the agent: `craft 4 stick using 2 planks`. */
  readonly text: string;
}

/**
 * The three cycles in the data and the recipe of each that is dropped: keeping gold ingot from
 * nuggets, iron nuggets from an ingot and honey bottles from a block is the only choice that gives the published
 * depth boundaries. Upstream gets this from its directory order; here it is stated.
 */
export const CYCLE_DROPS: readonly string[] = [
  "minecraft:gold_nugget <- minecraft:gold_ingot",
  "minecraft:iron_ingot <- minecraft:iron_nugget",
  "minecraft:honey_block <- minecraft:honey_bottle",
];

let loaded: Promise<CraftingTree> | undefined;

/** The loaded tree. Immutable after construction, so every environment of a server shares one. */
export class CraftingTree {
  /** Recipes per output id, in load order. */
  readonly itemRecipes = new Map<string, Recipe[]>();
  /** Recipes per group tag (including groups equal to their output id, which upstream also files). */
  readonly tagRecipes = new Map<string, Recipe[]>();
  /** Tag ids (after pseudo-items were taken out). */
  readonly tags = new Set<string>();
  /** Every known item id, pseudo-items included. */
  readonly items = new Set<string>();
  /** Item id -> its group tag; a later recipe overwrites an earlier one, as upstream. */
  readonly tagOf = new Map<string, string>();
  /** Goals in task order: by depth, then by item id. `goals[i % goals.length]` is task i. */
  readonly goals: readonly { id: string; depth: number }[];
  /** Input name -> recipes that use it, item recipes first, then tag recipes (so a recipe may appear twice). */
  readonly uses = new Map<string, Recipe[]>();
  readonly #depth = new Map<string, number>();

  /** Loads from TSV text in the format `facts_gen.ts` writes. */
  constructor(facts: string) {
    const deps = new Map<string, Set<string>>();
    const drops = new Set(CYCLE_DROPS);
    const inputs: Parsed[][] = [];
    for (const [lineNo, line] of facts.split("\n").entries()) {
      if (line === "" || line.startsWith("#")) continue;
      const [output, count, group, ins] = parseLine(line, lineNo + 1);
      for (const x of ins) (x.tag ? this.tags : this.items).add(x.id);
      this.items.add(output);
      // Decompression: one distinct input whose name ends in `_block` (9 ingots from a block and the like).
      if (ins.length === 1 && ins[0].id.endsWith("_block")) continue;
      const tag = group === null ? null : `minecraft:${group}`;
      if (tag !== null && tag !== output) {
        this.tags.add(tag);
        this.tagOf.set(output, tag);
      }
      const outDeps = deps.get(output) ?? new Set<string>();
      deps.set(output, outDeps);
      const loops = ins.some((x) => deps.get(x.id)?.has(output));
      if (loops || drops.has(`${output} <- ${ins.map((x) => x.id).join(", ")}`)) continue;
      // Names never change in the tag conversion below (only the tag flag does), so the text is final here.
      const recipe = { output, count, tag, inputs: ins, text: recipeText(output, count, ins) };
      inputs.push(ins);
      push(this.itemRecipes, output, recipe);
      for (const x of ins) {
        outDeps.add(x.id);
        for (const d of deps.get(x.id) ?? []) outDeps.add(d);
      }
      if (tag !== null) push(this.tagRecipes, tag, recipe);
    }
    this.#convertUncraftableTags(inputs);
    for (const recipes of [...this.itemRecipes.values(), ...this.tagRecipes.values()]) {
      for (const r of recipes) for (const x of r.inputs) push(this.uses, x.id, r);
    }
    const goals = [...this.itemRecipes.keys()].map((id) => ({ id, depth: this.depth(id) }));
    this.goals = goals.filter((g) => g.depth >= 1).sort((a, b) => a.depth - b.depth || (a.id < b.id ? -1 : 1));
  }

  /** Loads the checked-in `recipes.tsv` (a text import, so bundles and compiled binaries carry it). */
  static load(): Promise<CraftingTree> {
    // Immutable once built, so one tree serves every caller.
    loaded ??= Promise.resolve(new CraftingTree(RECIPES));
    return loaded;
  }

  // A tag input none of whose members has a recipe becomes an item named like the tag (`minecraft:oak_logs`).
  #convertUncraftableTags(inputs: { id: string; tag: boolean }[][]): void {
    const converted = new Set<string>();
    for (const ins of inputs) {
      for (const x of ins) {
        if (!x.tag) continue;
        const craftable = [...this.tagOf].some(([item, t]) => t === x.id && this.itemRecipes.has(item));
        if (!craftable) {
          x.tag = false;
          converted.add(x.id);
        }
      }
    }
    for (const id of converted) {
      this.items.add(id);
      this.tags.delete(id);
    }
  }

  /** Smallest number of crafting steps from base items: 0 for a base item, min over recipes of max(input + 1). */
  depth(name: string, path: Set<string> = new Set()): number {
    const known = this.#depth.get(name);
    if (known !== undefined) return known;
    if (path.has(name)) throw new RangeError(`The recipe graph has a cycle through ${name}; check CYCLE_DROPS`);
    const recipes = this.recipesOf(name);
    path.add(name);
    const d = recipes.length === 0
      ? 0
      : Math.min(...recipes.map((r) => Math.max(...r.inputs.map((x) => this.depth(x.id, path) + 1))));
    path.delete(name);
    this.#depth.set(name, d);
    return d;
  }

  /** Item recipes of a name, else its tag recipes, as upstream looks them up. */
  recipesOf(name: string): readonly Recipe[] {
    return this.itemRecipes.get(name) ?? this.tagRecipes.get(name) ?? [];
  }

  /** True when `get` must refuse the name because it can be crafted (as an item or a tag). */
  isCraftable(name: string): boolean {
    return this.itemRecipes.has(name) || this.tagRecipes.has(name);
  }

  /**
   * Every recipe below `name`, depth first with repeats: its own recipes, then for each recipe and each input the
   * input's traversal. A name already on the path stops there. Upstream's needed-recipe walk (section 3.3).
   */
  traverse(name: string, path: ReadonlySet<string> = new Set()): Recipe[] {
    if (path.has(name)) return [];
    const own = this.recipesOf(name);
    const out = [...own];
    const next = new Set(path).add(name);
    for (const r of own) for (const x of r.inputs) out.push(...this.traverse(x.id, next));
    return out;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function recipeText(output: string, count: number, inputs: readonly Parsed[]): string {
  const ins = inputs.map((x) => `${x.count} ${idToName(x.id)}`).join(", ");
  return `craft ${count} ${idToName(output)} using ${ins}`;
}

type Parsed = { id: string; tag: boolean; count: number };

function parseLine(line: string, lineNo: number): [string, number, string | null, Parsed[]] {
  const cols = line.split("\t");
  const count = Number(cols[1]);
  if (cols.length !== 4 || !Number.isInteger(count) || count < 1) {
    throw new SyntaxError(`recipes.tsv line ${lineNo} is not "output<TAB>count<TAB>group<TAB>inputs": ${line}`);
  }
  const inputs = cols[3].split(", ").map((s) => {
    const m = /^(\d+) (#?)([a-z0-9_]+)$/.exec(s);
    if (!m) throw new SyntaxError(`recipes.tsv line ${lineNo} has a malformed input "${s}"; expected "2 stick"`);
    return { id: `minecraft:${m[3]}`, tag: m[2] === "#", count: Number(m[1]) };
  });
  return [`minecraft:${cols[0]}`, count, cols[2] === "-" ? null : cols[2], inputs];
}
