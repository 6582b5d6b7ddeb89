/**
 * TextCraft's rules as the task sees them: the prompt (Crucible's own wording of upstream's content), upstream's
 * exact action extraction, the depth of each task index and the published splits.
 */
import type { ActionParse } from "../../src/env/client.ts";
import { ranges } from "../../src/task/splits.ts";
import type { Prompt } from "../../src/task/task.ts";

/** Crucible's wording of the instructions upstream gives (same rules, same examples, same answer format). */
export const TEXTCRAFT_PROMPT: Prompt = {
  user: "You will craft Minecraft items. You are given a few crafting recipes, written as commands of the form " +
    '"craft [target object] using [input ingredients]".\n' +
    'Each round you receive an observation and reply with exactly one action. You may "get" an ingredient ' +
    '(from your inventory or the surroundings), check what you hold with "inventory", or "craft" a target with ' +
    "one of the given crafting commands.\n" +
    'Always answer in exactly this form: "Thought:\\nyour reasoning.\\n\\nAction:\\nyour next action"\n\n' +
    "Remember:\n" +
    "1. Give a quantity in every get and craft command. For example: get 1 lapis lazuli - craft 1 blue dye " +
    "using 1 lapis lazuli - craft 1 golden carrot using 8 gold nugget, 1 carrot\n" +
    "2. With get, never say whether the item comes from the inventory or the surroundings.\n" +
    "3. Use only the crafting commands you were given, never commands of your own. Where a command names a " +
    'generic ingredient such as "planks", you may use a specific kind of it, such as "dark oak planks".\n\n',
  assistant: "OK. I will follow these instructions and do my best to complete the task.",
};

/** The reply upstream's client gives, without calling the server, when the text holds more than one action. */
export const ONLY_ONE_ACTION = "Error: Only one 'Action' is allowed per response. Please adjust your response.";

/**
 * Upstream's client rule: every `Action:` followed by any whitespace (newlines too) and the rest of that line;
 * more than one -> a local error reply; none -> the empty action; then every character outside `[A-Za-z0-9, ]` is
 * deleted, whitespace runs collapse to one space, and a bare `look` becomes `inventory`.
 */
export function parseTextCraftAction(text: string): ActionParse {
  const matches = [...text.matchAll(/Action:\s*([\s\S]*?)(?=\n|$)/g)];
  if (matches.length > 1) return { reply: { observation: ONLY_ONE_ACTION, reward: 0, done: false } };
  const raw = matches.length === 1 ? matches[0][1] : "";
  const action = raw.replace(/[^A-Za-z0-9, ]+/g, "").split(" ").filter((w) => w !== "").join(" ");
  return { action: action.toLowerCase() === "look" ? "inventory" : action };
}

/** Goals per depth under upstream's index order: depth d spans `DEPTH_RANGES[d - 1]`, inclusive. */
export const DEPTH_RANGES: readonly [number, number][] = [[0, 139], [140, 419], [420, 532], [533, 543]];

// The 18 ids of 181-419 that the published train split leaves out, and the 43 of 445-532 that it keeps.
const TRAIN_DEPTH2_GAPS = [184, 195, 216, 223, 229, 239, 243, 254, 265, 287, 302, 323, 362, 376, 381, 382, 385, 404];
const TRAIN_DEPTH3 = [
  445,
  446,
  448,
  449,
  450,
  451,
  452,
  455,
  459,
  462,
  463,
  464,
  466,
  469,
  470,
  471,
  472,
  475,
  477,
  480,
  481,
  482,
  484,
  489,
  491,
  492,
  495,
  496,
  501,
  502,
  504,
  506,
  510,
  511,
  513,
  514,
  517,
  518,
  520,
  523,
  528,
  531,
  532,
];

/**
 * The published splits (AgentGym-RL-Data-ID, via a third-party copy annotated by depth): test is the first ids of
 * each depth (31 + 41 + 25 + 3 = 100); train is 109 + 221 + 43 + 1 = 374 of the rest. Ids index upstream's goal
 * list; Crucible's server orders goals differently within a depth but keeps the same depth boundaries.
 */
export const TEXTCRAFT_SPLITS: { readonly train: readonly number[]; readonly test: readonly number[] } = {
  test: ranges([0, 30], [140, 180], [420, 444], [533, 535]),
  train: [
    ...ranges([31, 139]),
    ...ranges([181, 419]).filter((i) => !TRAIN_DEPTH2_GAPS.includes(i)),
    ...TRAIN_DEPTH3,
    537,
  ],
};

/** The crafting depth (1-4) of a task index, under upstream's index order; 0 outside the goals. */
export function depthOf(index: number): number {
  return DEPTH_RANGES.findIndex(([lo, hi]) => index >= lo && index <= hi) + 1;
}
