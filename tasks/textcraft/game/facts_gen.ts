/**
 * Rebuilds TextCraft's recipe facts (`recipes.tsv`) from `minecraft-data`'s 1.16 crafting recipes and the tables in
 * `facts_tables.ts`. `minecraft-data` expands every tag and ingredient list into one entry per
 * concrete combination; this module folds them back. Run `deno run -A tasks/textcraft/game/facts_gen.ts` to rewrite the
 * file; a test fails when the checked-in file and this rebuild differ.
 *
 * How alternatives are recognised: entries are grouped by (output, result count, template: the shape with its empty
 * cells, or the number of shapeless ingredients). Within a group, slots that hold the same item in every entry form
 * one key; a key whose item differs between entries is "varying". A varying key is a list (first item kept) when
 * its output is in table B, a tag when its item set is in table A, and otherwise stands for separate recipes.
 */
// A regeneration-only dependency, kept out of deno.json so the run path never downloads it (tests/deno.lock pins it).
// deno-lint-ignore no-import-prefix
import mcData from "npm:minecraft-data@3.117.0";
import { groupOf, LIST_FIRST, setKey, TAG_OF_SET, TAG_OVERRIDE, UPSTREAM_ORDER } from "./facts_tables.ts";

/** One rebuilt recipe: inputs in TextCraft's order, a tag input written `#name`. */
export interface RecipeFact {
  output: string;
  count: number;
  group: string | null;
  inputs: { name: string; count: number }[];
}

interface RawEntry {
  result: { id: number; count: number };
  inShape?: (number | null)[][];
  ingredients?: number[];
}

/** The minecraft-data version whose recipes TextCraft's 1.16.5 files match. */
export const MINECRAFT_VERSION = "1.16.5";

/** Folds minecraft-data's expanded entries into TextCraft recipes, sorted by output id (stable). */
export function rebuildFacts(): RecipeFact[] {
  const data = mcData(MINECRAFT_VERSION);
  const names = new Map<number, string>(data.itemsArray.map((i) => [i.id, i.name]));
  const name = (id: number) => {
    const n = names.get(id);
    if (n === undefined) throw new RangeError(`minecraft-data item id ${id} has no name; is the package intact?`);
    return n;
  };
  const raw = data.recipes as unknown as Record<string, RawEntry[]>;
  const facts: RecipeFact[] = [];
  for (const entries of Object.values(raw)) {
    const groups = new Map<string, { slots: (string | null)[][]; shaped: boolean }>();
    for (const e of entries) {
      const shaped = e.inShape !== undefined;
      const slots = shaped ? e.inShape!.flat().map((x) => (x === null ? null : name(x))) : e.ingredients!.map(name);
      const template = shaped
        ? e.inShape!.map((row) => row.map((x) => (x === null ? "." : "#")).join("")).join("/")
        : `${slots.length}`;
      const key = `${e.result.count}|${template}`;
      const g = groups.get(key) ?? { slots: [], shaped };
      g.slots.push(slots);
      groups.set(key, g);
    }
    const output = name(entries[0].result.id);
    for (const [key, g] of groups) {
      facts.push(...foldGroup(output, Number(key.split("|")[0]), g.slots, g.shaped));
    }
  }
  facts.sort((a, b) => (a.output < b.output ? -1 : a.output > b.output ? 1 : 0));
  // Upstream's recipe folder holds a stale `sugar.json` beside `sugar_from_sugar_cane.json`: the same recipe twice.
  // The stale copy predates the `sugar` group (319 upstream recipes carry a group, this one not among them).
  const sugar = facts.findIndex((f) => f.output === "sugar" && f.inputs[0].name === "sugar_cane");
  if (sugar < 0) throw new RangeError("minecraft-data has no sugar-from-sugar-cane recipe to duplicate");
  facts.splice(sugar + 1, 0, { ...structuredClone(facts[sugar]), group: null });
  return facts;
}

function foldGroup(output: string, count: number, entries: (string | null)[][], shaped: boolean): RecipeFact[] {
  // Slot i and j share a key when they hold the same item in every entry.
  const keyOfSlot = entries[0].map((_, i) => entries.map((e) => e[i]).join("\u0000"));
  const keys = [...new Set(keyOfSlot.filter((_, i) => entries[0][i] !== null))];
  type Key = { slots: number; items: string[]; kind: "fixed" | "list" | "tag" | "separate"; tag?: string };
  const info: Key[] = keys.map((k) => {
    const first = keyOfSlot.indexOf(k);
    const items = [...new Set(entries.map((e) => e[first]!))];
    return { slots: keyOfSlot.filter((x) => x === k).length, items, kind: "fixed" };
  });
  for (const k of info) {
    if (k.items.length === 1) continue;
    const listFirst = LIST_FIRST.get(output);
    if (listFirst !== undefined && k.items.includes(listFirst)) {
      if (k.items[0] !== listFirst) {
        throw new RangeError(`The list for ${output} starts with ${k.items[0]}, expected ${listFirst}`);
      }
      k.kind = "list";
    } else if (TAG_OF_SET.has(setKey(k.items))) {
      k.kind = "tag";
      k.tag = TAG_OVERRIDE.get(output) ?? TAG_OF_SET.get(setKey(k.items));
    } else k.kind = "separate";
  }
  const seen = new Set<string>();
  const out: RecipeFact[] = [];
  for (const e of entries) {
    const inputs = info.map((k, i) => {
      const slot = keyOfSlot.indexOf(keys[i]);
      const item = k.kind === "tag" ? `#${k.tag}` : k.kind === "separate" ? e[slot]! : k.items[0];
      return { name: item, count: k.slots };
    });
    const sig = inputs.map((x) => `${x.count} ${x.name}`).join(",");
    if (seen.has(sig)) continue;
    seen.add(sig);
    const plain = inputs.map((x) => x.name.replace(/^#/, ""));
    out.push({ output, count, group: groupOf(output, plain), inputs: shaped ? reorder(output, inputs) : inputs });
  }
  return out;
}

function reorder(output: string, inputs: RecipeFact["inputs"]): RecipeFact["inputs"] {
  const order = UPSTREAM_ORDER.get(output);
  if (order === undefined) return inputs;
  const plain = (x: { name: string }) => x.name.replace(/^#/, "");
  if (setKey(order) !== setKey(inputs.map(plain)) || order.length !== inputs.length) {
    throw new RangeError(`The upstream order for ${output} (${order}) does not fit its inputs (${inputs.map(plain)})`);
  }
  return order.map((n) => inputs.find((x) => plain(x) === n)!);
}

/** The facts as the checked-in TSV text: output, count, group (`-` for none), inputs. */
export function formatFacts(facts: readonly RecipeFact[]): string {
  const head = [
    `# TextCraft's crafting recipes, rebuilt from minecraft-data ${MINECRAFT_VERSION} by tasks/textcraft/game/facts_gen.ts.`,
    "# Do not edit by hand: change the generator or its tables and run it again.",
    "# Columns: output, output count, recipe group (- for none), inputs in TextCraft's order (#name is a tag).",
  ];
  const lines = facts.map((f) =>
    [f.output, f.count, f.group ?? "-", f.inputs.map((x) => `${x.count} ${x.name}`).join(", ")].join("\t")
  );
  return [...head, ...lines].join("\n") + "\n";
}

if (import.meta.main) {
  const path = new URL("./recipes.tsv", import.meta.url);
  await Deno.writeTextFile(path, formatFacts(rebuildFacts()));
  console.log(`Wrote ${path.pathname}`);
}
