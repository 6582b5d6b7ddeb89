/**
 * How TextCraft's oracle writes its replies for supervised data (task_options.oracle_format):
 *
 *   thought  `Thought:\nI will <action> next.\n\nAction:\n<action>`, the layout the task's prompt asks for;
 *   action   `Action: <action>` alone;
 *   recipe   the command-list line the action works on, then the action (choosing becomes copying);
 *   tail     that line from its item on (`oak planks using 1 oak logs`), so every copied token follows a token that
 *            names its line;
 *   stack    the stack policy's replies (stack.ts): the items being crafted with their recipes, then the action;
 *   stack_tail  the same plan, each frame written as its command line from the item on (stack.ts, tail frames).
 *
 * The first four play the shortest plan of oracle.ts; `stack` and `stack_tail` play the stack policy's plan.
 */
import type { StackFrames } from "./stack.ts";

/** The reply layouts, as task_options.oracle_format names them. */
export const ORACLE_FORMATS = ["thought", "action", "recipe", "tail", "stack", "stack_tail"] as const;

/** One reply layout. */
export type OracleFormat = typeof ORACLE_FORMATS[number];

/** The layouts the stack policy writes. */
export type StackFormat = "stack" | "stack_tail";

/** The stack policy's frame layout of a format, or undefined when the oracle's shortest plan writes it. */
export function stackFrames(format: OracleFormat): StackFrames | undefined {
  return format === "stack" ? "count" : format === "stack_tail" ? "tail" : undefined;
}

/** An oracle reply: "recipe" puts the command-list line it works on (`line`) first, "tail" the line from its item. */
export function oracleReply(action: string, format: Exclude<OracleFormat, StackFormat>, line?: string): string {
  if (format === "thought") return `Thought:\nI will ${action} next.\n\nAction:\n${action}`;
  if (format === "action" || !line) return `Action: ${action}`;
  return `Thought: ${format === "tail" ? line.replace(/^craft \d+ /, "") : line}\nAction: ${action}`;
}

/**
 * For each oracle action, the line of the task's command list it works on: a craft's own recipe line, and for a
 * get, the line of the first later craft that uses the item. Writing that line first turns choosing an action into
 * copying from the context, which a small model learns far sooner.
 */
export function recipeLines(opening: string, actions: readonly string[]): (string | undefined)[] {
  const parse = (l: string) => /^craft (\d+) (.+?) using (.+)$/.exec(l);
  const lines = opening.split("\n").map(parse).filter((m) => m !== null);
  const inputs = (list: string) => list.split(", ").map((p) => /^(\d+) (.+)$/.exec(p) ?? ["", "", p]);
  // The line of a craft: same output, same counts, and each input the same or a kind of it (oak planks / planks).
  const lineOf = (craft: RegExpExecArray) => {
    const want = inputs(craft[3]);
    const same = lines.filter((l) => l[2] === craft[2]);
    const match = same.find((l) => {
      const have = inputs(l[3]);
      return have.length === want.length &&
        have.every((h, k) => h[1] === want[k][1] && (h[2] === want[k][2] || want[k][2].endsWith(` ${h[2]}`)));
    });
    return (match ?? same[0])?.[0];
  };
  const crafts = actions.map(parse);
  return actions.map((a, i) => {
    const craft = crafts[i];
    if (craft) return lineOf(craft);
    const item = /^get \d+ (.+)$/.exec(a)?.[1];
    const consumer = item === undefined
      ? undefined
      : crafts.find((c, k) => k > i && c && inputs(c[3]).some((p) => p[2] === item));
    return consumer ? lineOf(consumer) : undefined;
  });
}
