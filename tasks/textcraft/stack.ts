/**
 * The stack policy: a depth-first way to play TextCraft that a small model can learn, because every token of a
 * reply is either copied from the context or follows from the previous reply by one small step.
 *
 * A reply is the stack of items being crafted, root (the goal) first, then the action:
 *
 *   Thought: blue carpet 1: 2 blue wool | blue wool 2: 1 blue dye, 1 white wool | blue dye 1: 1 lapis lazuli
 *   Action: get 1 lapis lazuli
 *
 * or, with tail frames (StackFrames), each frame its command line from the item on:
 *
 *   Thought: blue carpet using 2 blue wool | blue wool using 1 blue dye, 1 white wool x2 | blue dye using 1 lapis
 *   lazuli
 *
 * Every name follows a space, as in the command list (`Thought:` opens the reply for that reason): the word-level
 * tokenizer gives a name after a space and a name at the start of a text different tokens, and copying the goal
 * into the first frame must be a copy of the same token.
 *
 * Each frame is an item, how many more times it must be crafted (ceil(needed / the recipe's yield)), and its
 * recipe's inputs as the command list writes them (a tag such as `planks` replaced by the member chosen for it).
 * The top frame's next input is fetched (`get`) or, when the list has a recipe for it, pushed as a new frame; a
 * frame whose inputs are all in hand is crafted, then crafted again or popped. Leftovers are not tracked, so a
 * plan may craft an item again where the oracle would reuse what is left: longer than the oracle's plans, never
 * wrong.
 *
 * The policy reads only the task's opening (command list and goal); which names are tags, and their members, is
 * the caller's knowledge (TextCraft's tag table for the real game, none for synthetic worlds).
 */

/** A recipe input as a command line writes it. */
export interface Ingredient {
  /** The input's name as written (`oak planks`). */
  name: string;
  /** How many the line takes. */
  count: number;
}

/** One line of the command list. */
export interface CommandLine {
  /** The item the line crafts. */
  output: string;
  /** How many one craft makes. */
  count: number;
  /** What one craft takes. */
  inputs: Ingredient[];
  /** The line as written. */
  text: string;
}

/** A task's opening, parsed. */
export interface Opening {
  /** The command list, in order. */
  lines: CommandLine[];
  /** The item to craft. */
  goal: string;
}

const LINE = /^craft (\d+) (.+?) using (.+)$/;
const COUNTED = /^(\d+) (.+)$/;

/** Parses `Crafting commands:\n<lines>\n\nGoal: craft <goal>.`; a malformed opening is a SyntaxError. */
export function parseOpening(text: string): Opening {
  const goal = /\nGoal: craft (.+)\.$/.exec(text)?.[1];
  if (goal === undefined) throw new SyntaxError(`A TextCraft opening ends with "Goal: craft X.", got ${tail(text)}`);
  const lines = text.split("\n").filter((l) => l.startsWith("craft ")).map(parseCommandLine);
  return { lines, goal };
}

/**
 * Parses one `craft N X using 2 a, 1 b`: a command line, or a craft action, which is written the same way; a
 * malformed one is a SyntaxError.
 */
export function parseCommandLine(l: string): CommandLine {
  const m = LINE.exec(l);
  if (!m) throw new SyntaxError(`Not a command line: "${l}"`);
  const inputs = m[3].split(", ").map((p) => {
    const c = COUNTED.exec(p);
    if (!c) throw new SyntaxError(`Not a counted input: "${p}" in "${l}"`);
    return { name: c[2], count: Number(c[1]) };
  });
  return { output: m[2], count: Number(m[1]), inputs, text: l };
}

function tail(text: string): string {
  return JSON.stringify(text.slice(-40));
}

/** One turn of the policy: the reply to send and the action inside it. */
export interface StackTurn {
  /** The reply to send, in the format the policy writes. */
  reply: string;
  /** The action inside it. */
  action: string;
}

interface Frame {
  line: CommandLine;
  /** Crafts still to make, this one included. */
  k: number;
  inputs: Ingredient[];
  /** Index of the input being gathered. */
  next: number;
}

/** Options of {@linkcode stackPlan}. */
export interface StackOptions {
  /** The members of a tag input (`planks` -> `oak planks`, ...), or undefined when the name is not a tag. */
  tagMembers?: (name: string) => readonly string[] | undefined;
  /** Most turns to plan (a guard against plans that cannot end); default 200. */
  maxTurns?: number;
  /** How a reply writes each frame (default "count"); see {@linkcode StackFrames}. */
  frames?: StackFrames;
  /** The count a craft action writes (default "line"); see {@linkcode CraftCount}. */
  craftCount?: CraftCount;
}

/**
 * The count before the item in a craft action:
 *
 *   line  the command line's yield, as the list writes it (`craft 4 oak planks using 1 oak logs`);
 *   one   always 1 (`craft 1 oak planks using 1 oak logs`). TextCraft parses a craft's output count but crafts the
 *         recipe's yield whatever it says (it appears only in the refusal message), so the game answers both alike,
 *         and the action becomes a copy of the top frame: the yield sits before the item's name in the list, where
 *         no name points to it, and a small model writes the commonest count instead (issue 27's base: 89% wrong).
 */
export type CraftCount = "line" | "one";

/** The parts of {@linkcode StackOptions} that choose how replies are written. */
export type StackLayout = Pick<StackOptions, "frames" | "craftCount">;

/**
 * How a reply writes a frame:
 *
 *   count  `blue wool 2: 1 blue dye, 1 white wool`: the item, the crafts still to make, its inputs;
 *   tail   `blue wool using 1 blue dye, 1 white wool x2`: the item's command line from the item on, verbatim (each
 *          token a copy of what follows the name just written), then ` xK` only when K > 1 crafts are still to make.
 */
export type StackFrames = "count" | "tail";

/**
 * The policy's turns for an opening, assuming every action succeeds. Recipes are the first line of the list for
 * an item; a tag input takes the first member that has a line. Throws RangeError when the goal cannot be made
 * from the list (an input with neither a line nor a way to be fetched cannot occur in TextCraft's lists).
 */
export function stackPlan(opening: Opening, o: StackOptions = {}): StackTurn[] {
  const first = new Map<string, CommandLine>();
  for (const l of opening.lines) if (!first.has(l.output)) first.set(l.output, l);
  const resolve = (x: Ingredient): Ingredient => {
    const members = o.tagMembers?.(x.name);
    if (!members) return x;
    const chosen = opening.lines.find((l) => members.includes(l.output));
    if (!chosen) throw new RangeError(`No line makes a member of tag "${x.name}"`);
    return { name: chosen.output, count: x.count };
  };
  const frame = (item: string, need: number): Frame => {
    const line = first.get(item)!;
    return { line, k: Math.ceil(need / line.count), inputs: line.inputs.map(resolve), next: 0 };
  };
  if (!first.has(opening.goal)) throw new RangeError(`No line crafts the goal "${opening.goal}"`);
  const stack = [frame(opening.goal, 1)];
  const turns: StackTurn[] = [];
  const maxTurns = o.maxTurns ?? 200;
  while (stack.length > 0) {
    if (turns.length >= maxTurns) throw new RangeError(`The plan for "${opening.goal}" passes ${maxTurns} turns`);
    const top = stack[stack.length - 1];
    if (top.next < top.inputs.length) {
      const x = top.inputs[top.next];
      if (first.has(x.name)) {
        if (stack.some((f) => f.line.output === x.name)) throw new RangeError(`Recipe loop through "${x.name}"`);
        stack.push(frame(x.name, x.count));
        continue;
      }
      const action = `get ${x.count} ${x.name}`;
      turns.push({ reply: stackReply(stack, action, o.frames), action });
      top.next++;
      continue;
    }
    const count = o.craftCount === "one" ? 1 : top.line.count;
    const action = `craft ${count} ${top.line.output} using ${ingredientsText(top.inputs)}`;
    turns.push({ reply: stackReply(stack, action, o.frames), action });
    top.k--;
    if (top.k > 0) top.next = 0;
    else {
      stack.pop();
      if (stack.length > 0) stack[stack.length - 1].next++;
    }
  }
  return turns;
}

/** `2 stick, 6 iron ingot` */
export function ingredientsText(inputs: readonly Ingredient[]): string {
  return inputs.map((x) => `${x.count} ${x.name}`).join(", ");
}

function stackReply(stack: readonly Frame[], action: string, layout: StackFrames = "count"): string {
  const frames = stack.map((f) =>
    layout === "tail"
      ? `${f.line.output} using ${ingredientsText(f.inputs)}${f.k > 1 ? ` x${f.k}` : ""}`
      : `${f.line.output} ${f.k}: ${ingredientsText(f.inputs)}`
  );
  return `Thought: ${frames.join(" | ")}\nAction: ${action}`;
}
