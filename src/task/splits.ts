/**
 * Task splits as AgentGym-RL-Data-ID publishes them: JSON arrays of `{"item_id": "<task>_<index>"}`, read as they
 * are. The index is the number after the last `_`.
 */
import { z } from "zod";

const ItemFile = z.array(z.object({ item_id: z.string() }).loose());

/** Parses an item file's text into task indices; checks every id belongs to `task`. Throws SyntaxError. */
export function parseItemIds(text: string, task: string, source = "item file"): number[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`${source} is not JSON: ${(e as Error).message}`);
  }
  const items = ItemFile.safeParse(value);
  if (!items.success) {
    throw new SyntaxError(`${source} must be an array of {"item_id": "${task}_N"}: ${items.error.issues[0].message}`);
  }
  return items.data.map(({ item_id }, i) => {
    const cut = item_id.lastIndexOf("_");
    const index = Number(item_id.slice(cut + 1));
    if (cut < 0 || item_id.slice(0, cut) !== task || !/^\d+$/.test(item_id.slice(cut + 1))) {
      throw new SyntaxError(`${source} entry ${i} has item_id "${item_id}"; expected "${task}_<index>"`);
    }
    return index;
  });
}

/** Reads an item file from disk. */
export async function readItemIds(path: string | URL, task: string): Promise<number[]> {
  return parseItemIds(await Deno.readTextFile(path), task, String(path));
}

/** Formats indices as an item file, the inverse of `parseItemIds`. */
export function formatItemIds(indices: readonly number[], task: string): string {
  return JSON.stringify(indices.map((i) => ({ item_id: `${task}_${i}` })));
}

/** Inclusive integer ranges, e.g. `ranges([0, 2], [5, 5])` -> [0, 1, 2, 5]. */
export function ranges(...spans: [number, number][]): number[] {
  return spans.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i));
}
