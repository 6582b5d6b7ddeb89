/**
 * What identifies a TextCraft state, for GiGPO's step groups (Task.anchor): the inventory. Within one task the goal and
 * the command list never change, and the inventory is all the game holds (game/game.ts), so two positions with the
 * same inventory are the same game, however they got there. The observation alone is not: "Got 1 oak logs" follows
 * any inventory, and a refused craft leaves one unchanged.
 *
 * The client never sees the inventory unless the agent asks for it, so it is replayed from the episode's turns with
 * the game's own rules: a step answered `Got N X` added N of X; one answered `Crafted N minecraft:y` added N of y and
 * took each input the action gave (`craft ... using 2 oak planks, 1 stick`: the game takes exactly the counts given,
 * by name); anything else (a refusal, `inventory`, a reply the task gave locally) changed nothing. What shaped rewards
 * remember beyond the inventory (which plan items were ever crafted, whether the last action was refused) is the
 * reward's bookkeeping, not the game's state, and is left out.
 *
 * @example
 * ```ts
 * textCraftAnchor({ firstObservation: "...", observation: "Got 1 stick", turns: [
 *   { action: "get 2 oak logs", observation: "Got 2 oak logs" },
 *   { action: "get 1 stick", observation: "Got 1 stick" },
 * ] }); // "inventory minecraft:oak_logs=2 minecraft:stick=1"
 * ```
 */
import type { SeenSoFar } from "../../src/task/anchor.ts";
import { nameToId, pyStrip } from "./game/python.ts";

// The game's own patterns (game/game.ts): an action's craft and its counted inputs; its answers to a get and a craft.
const CRAFT = /^craft ([^\n]*) using ([^\n]*)/;
const COUNTED = /^([0-9]+) ([^\n]*)/;
const GOT = /^Got ([0-9]+) ([^\n]*)$/;
const CRAFTED = /^Crafted ([0-9]+) (\S+)$/;

/** The inventory after the turns seen so far, replayed from the game's answers (see the module header). */
export function replayInventory(turns: SeenSoFar["turns"]): Map<string, bigint> {
  const held = new Map<string, bigint>();
  const add = (id: string, n: bigint) => held.set(id, (held.get(id) ?? 0n) + n);
  for (const { action, observation } of turns) {
    if (action === null) continue;
    const got = GOT.exec(observation);
    if (got) {
      add(nameToId(got[2]), BigInt(got[1]));
      continue;
    }
    const crafted = CRAFTED.exec(observation), craft = CRAFT.exec(action);
    if (!crafted || !craft) continue;
    for (const segment of craft[2].split(",")) {
      const input = COUNTED.exec(pyStrip(segment));
      if (input) add(nameToId(input[2]), -BigInt(input[1]));
    }
    add(crafted[2], BigInt(crafted[1]));
  }
  for (const [id, n] of held) if (n === 0n) held.delete(id);
  return held;
}

/** TextCraft's anchor: the inventory, items in id order with their counts. */
export function textCraftAnchor(seen: SeenSoFar): string {
  const held = [...replayInventory(seen.turns)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `inventory${held.map(([id, n]) => ` ${id}=${n}`).join("")}`;
}
