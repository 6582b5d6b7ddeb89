/**
 * Renaming TextCraft items consistently across an episode's text: a permutation of item names applied to the
 * commands, the actions and the observations (names like `dark oak planks` and ids like
 * `minecraft:dark_oak_planks` alike). A renamed oracle episode is still a correct demonstration, because what an
 * episode asks is written in its own command list; so renamed copies teach a model to read the list rather than
 * memorise which items the training tasks use. Tags and their members keep their names: the link between
 * `planks` and `oak planks` is not written in the episode.
 */
import type { Rng } from "../../src/util/random.ts";
import { idToName, nameToId } from "./game/python.ts";
import type { CraftingTree } from "./game/tree.ts";

/** Renames items in text with one fixed permutation. */
export class ItemRenamer {
  /** Names that may be renamed (and be renamed to). */
  readonly names: readonly string[];
  readonly #pattern: RegExp;

  constructor(tree: CraftingTree) {
    const fixed = new Set<string>();
    for (const [item, tag] of tree.tagOf) fixed.add(item).add(tag);
    for (const tag of tree.tags) fixed.add(tag);
    this.names = [...tree.items].filter((id) => !fixed.has(id)).map(idToName).sort();
    // Longest first, so that `dark oak planks` wins over `oak planks`; never inside a longer word or id.
    const forms = this.names.flatMap((n) => [n, nameToId(n)]).sort((a, b) => b.length - a.length);
    const alt = forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    this.#pattern = new RegExp(`(?<![\\p{L}\\p{N}_:])(?:${alt})(?![\\p{L}\\p{N}_])`, "gu");
  }

  /** A random permutation of the renamable names. */
  permutation(rng: Rng): Map<string, string> {
    const shuffled = rng.shuffle([...this.names]);
    return new Map(this.names.map((n, i) => [n, shuffled[i]]));
  }

  /** `text` with every renamable name and id replaced by its image under `map` (in one pass, so no chains). */
  apply(text: string, map: ReadonlyMap<string, string>): string {
    return text.replace(this.#pattern, (m) => {
      if (m.startsWith("minecraft:")) return nameToId(map.get(idToName(m)) ?? idToName(m));
      return map.get(m) ?? m;
    });
  }
}
