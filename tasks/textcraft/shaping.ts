/**
 * TextCraft's shaped rewards for RL (`task_options.progress_reward`, `task_options.repeat_penalty`; both 0 by
 * default, which leaves the served games untouched: upstream's 1 for the goal and 0 otherwise). The embedded server's
 * games pay them, so the trainer never learns what a TextCraft item is, and `isSuccess` (a reward of exactly 1)
 * keeps upstream's rule: a failure's score stays below 1.
 *
 * Every step's reward is the episode's score so far, so the episode's reward (its last step's, as AgentGym-RL scores
 * an episode) is its score at the end:
 *
 *   the goal crafted on this step:  1
 *   otherwise:                      s · min(k, N) / N  −  p · r
 *
 * - s = progress_reward, in [0, 1): the most a failure can earn;
 * - k = distinct items of the goal's recipe tree crafted so far, the goal left out: an item counts once however
 *   often it is crafted, by any of the command list's recipes for it, a tag input by any member the list makes
 *   (`oak planks` for `planks`); an item off the tree (a distractor's output) never counts;
 * - N = the intermediate items the stack plan crafts (stack.ts: the list's first recipe of each item, a tag's first
 *   member), so crafting each item one plan needs earns all of s; a depth-1 goal has none and earns no progress;
 * - p = repeat_penalty, r = steps whose action is the one the game refused on the step just before (a refusal
 *   changes nothing in the game, so that repeat is refused again): the loops a stuck policy runs until the round
 *   limit. A success still scores 1.
 *
 * Worked example (s = 0.3; goal `crafting table`; list `craft 4 oak planks using 1 oak logs`, `craft 1 crafting table
 * using 4 planks`, `craft 4 stick using 2 planks`): the tree's items are the plank kinds the list makes, {oak planks},
 * and N = 1. `get 1 oak logs` scores 0, `craft 4 oak planks using 1 oak logs` 0.3, `craft 4 stick using 2 oak planks`
 * (off the tree) still 0.3, the same planks crafted again still 0.3, `craft 1 crafting table using 4 oak planks` 1.
 */
import type { ServedGame, ServedStep } from "../../src/env/server/game.ts";
import { nameToId } from "./game/python.ts";
import { type CommandLine, type Opening, parseCommandLine, parseOpening, stackPlan } from "./stack.ts";

/** The two weights (task options progress_reward and repeat_penalty). */
export interface RewardShaping {
  /** s: the share of a success's reward that crafting a plan's intermediate items earns, in [0, 1). */
  progress: number;
  /** p: taken per step that repeats the action the game refused on the step before. */
  repeatPenalty: number;
}

/** What the score reads of a task: the goal's id, the ids of its tree's intermediate items, and N. */
export interface GoalTree {
  goal: string;
  /** Item ids (`minecraft:oak_planks`) of every item the list makes on the way to the goal, the goal left out. */
  items: ReadonlySet<string>;
  /** The intermediate items the stack plan crafts (0 for a depth-1 goal). */
  planItems: number;
}

/** Whether an observation is TextCraft refusing an action (every failure message of game.ts and worlds.ts). */
export function refusedObservation(observation: string): boolean {
  return /^(Could not|Wrong item format)/.test(observation);
}

/** Whether the options ask for any shaping. */
export function shapingOn(o: RewardShaping): boolean {
  return o.progress > 0 || o.repeatPenalty > 0;
}

/**
 * The goal's recipe tree as its opening lists it: from the goal, every line that makes a name, and the names of its
 * inputs in turn (a tag input through `tagMembers`, the caller's knowledge: TextCraft's tag table, none in synthetic
 * worlds). In TextCraft's lists no distractor makes an item of the tree (every recipe of a tree item is a needed
 * line), so the walk finds the tree exactly.
 */
export function goalTree(opening: Opening, tagMembers?: (name: string) => readonly string[] | undefined): GoalTree {
  const byOutput = new Map<string, CommandLine[]>();
  for (const l of opening.lines) byOutput.set(l.output, [...(byOutput.get(l.output) ?? []), l]);
  const items = new Set<string>(), seen = new Set<string>(), stack = [opening.goal];
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const members = tagMembers?.(name);
    if (members) {
      stack.push(...members.filter((m) => byOutput.has(m)));
      continue;
    }
    const lines = byOutput.get(name);
    if (!lines) continue; // fetched with `get`
    if (name !== opening.goal) items.add(nameToId(name));
    for (const l of lines) stack.push(...l.inputs.map((x) => x.name));
  }
  let planItems: number;
  try {
    const crafts = stackPlan(opening, { tagMembers }).filter((t) => t.action.startsWith("craft "));
    const made = new Set(crafts.map((t) => parseCommandLine(t.action).output));
    made.delete(opening.goal);
    planItems = made.size;
  } catch (e) {
    // A list the stack plan cannot finish (none of TextCraft's goals; tested): every item of the tree counts.
    if (!(e instanceof RangeError)) throw e;
    planItems = items.size;
  }
  return { goal: nameToId(opening.goal), items, planItems };
}

const CRAFTED = /^Crafted [0-9]+ (\S+)$/;

/** One episode's score, step by step (see the module header). */
export class EpisodeScore {
  readonly #tree: GoalTree;
  readonly #o: RewardShaping;
  readonly #crafted = new Set<string>();
  #repeats = 0;
  #last: { action: string; refused: boolean } | undefined;

  constructor(tree: GoalTree, o: RewardShaping) {
    this.#tree = tree;
    this.#o = o;
  }

  /** Items of the tree crafted so far (k, before the cap at N). */
  get crafted(): number {
    return this.#crafted.size;
  }

  /** Steps that repeated the action refused on the step before (r). */
  get repeats(): number {
    return this.#repeats;
  }

  /** The score after a step that sent `action` and got `out` from the game. */
  step(action: string, out: Pick<ServedStep, "observation" | "reward">): number {
    if (this.#last?.refused && this.#last.action === action) this.#repeats++;
    this.#last = { action, refused: refusedObservation(out.observation) };
    const made = CRAFTED.exec(out.observation)?.[1];
    if (made !== undefined && this.#tree.items.has(made)) this.#crafted.add(made);
    return out.reward === 1 ? 1 : this.score;
  }

  /** The score of a failure so far: s · min(k, N) / N − p · r. */
  get score(): number {
    const { planItems } = this.#tree;
    const progress = planItems === 0 ? 0 : this.#o.progress * Math.min(this.#crafted.size, planItems) / planItems;
    return progress - this.#o.repeatPenalty * this.#repeats;
  }
}

/**
 * A served game whose steps carry the shaped score (see the module header). Each reset reads the opening the game
 * answers, so the same wrapper serves TextCraft's own tasks and synthetic worlds.
 */
export function shapedGame(
  game: ServedGame,
  o: RewardShaping,
  tagMembers?: (name: string) => readonly string[] | undefined,
): ServedGame {
  let score: EpisodeScore | undefined;
  return {
    reset(index) {
      const r = game.reset(index);
      score = new EpisodeScore(goalTree(parseOpening(typeof r === "string" ? r : r.observation), tagMembers), o);
      return r;
    },
    step(action) {
      const out = game.step(action);
      if (!score) return out; // the inner game refuses a step before a reset with its own error
      return { ...out, reward: score.step(action, out) };
    },
  };
}
