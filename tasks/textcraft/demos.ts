/**
 * The oracle's demonstrations of TextCraft tasks, as replies in a chosen layout (formats.ts): the shortest plan of
 * oracle.ts for the first four layouts, the stack policy's depth-first plan (stack.ts) for `stack` and `stack_tail`. Both read the
 * task's opening as Crucible's server writes it; the tag table (which items are kinds of `planks`) comes from the
 * crafting tree, as a player's knowledge of the game would.
 */
import { TextCraftGame } from "./game/game.ts";
import { idToName, nameToId } from "./game/python.ts";
import type { CraftingTree } from "./game/tree.ts";
import { type OracleFormat, oracleReply, recipeLines, stackFrames } from "./formats.ts";
import { solveTask } from "./oracle.ts";
import { type CraftCount, parseOpening, stackPlan } from "./stack.ts";

/** The members of each tag by name (`planks` -> `oak planks`, ...), for tag inputs of command lines. */
export function tagMembers(tree: CraftingTree): (name: string) => readonly string[] | undefined {
  const members = new Map<string, string[]>();
  for (const [item, tag] of tree.tagOf) {
    const list = members.get(tag) ?? [];
    list.push(idToName(item));
    members.set(tag, list);
  }
  return (name) => (tree.tags.has(nameToId(name)) ? members.get(nameToId(name)) ?? [] : undefined);
}

/** The replies that solve task `index` in `format`. */
export function demoReplies(
  tree: CraftingTree,
  index: number,
  o: { format: OracleFormat; craftCount?: CraftCount },
): string[] {
  const opening = new TextCraftGame(tree).reset(BigInt(index));
  const format = o.format;
  if (format === "stack" || format === "stack_tail") {
    const layout = { frames: stackFrames(format), craftCount: o.craftCount };
    return stackPlan(parseOpening(opening), { tagMembers: tagMembers(tree), ...layout }).map((t) => t.reply);
  }
  const actions = solveTask(tree, index).actions;
  // Formats without a quoted line ignore it.
  const lines = recipeLines(opening, actions);
  return actions.map((a, k) => oracleReply(a, format, lines[k]));
}
