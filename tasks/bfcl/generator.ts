/**
 * Crucible's own multi-turn tasks over BFCL's eight API classes, in BFCL's entry format, for demos, training and tests
 * on a machine without BFCL's files. An entry draws one or two class worlds (worlds.ts), 2-4 user requests, and plays
 * every candidate request's calls on fresh instances (the accepted calls so far, then the candidate): a candidate
 * whose calls raise, answer an `error` or report a false `..._status` is drawn again, so ground truth always runs
 * cleanly. Entries cycle through BFCL's categories: `base`; `miss_param` (one request said without an argument,
 * ground truth empty, the next turn gives it); `miss_func` (one request's function held out: ground truth empty on
 * that turn, the next turn is empty and adds the function, as BFCL's `missed_function`); `long_context` (base-like
 * turns over the worlds' much larger initial states, and the classes load BFCL's long-context filler, as BFCL's
 * `multi_turn_long_context`: its results run to thousands of tokens).
 *
 * Splits share no scenario: an entry's split is a hash of its question and initial state (one in five is held
 * out), so the same scenario can never land in both, whatever the seeds.
 *
 * @example
 * ```ts
 * const test = generateEntries({ seed: 1, count: 50, split: "test" }, newInstance);
 * test[0].groundTruth; // [["touch(file_name='notes_3.txt')"], [], ...]
 * ```
 */
import { Rng } from "../../src/util/random.ts";
import type { BfclEntry, Message } from "./entries.ts";
import { type ClassFactory, ERROR_PREFIX, executeCall, newInstances } from "./execute.ts";
import { callText, type ParsedCall } from "./literal.ts";
import { type Request, type World, WORLDS } from "./worlds.ts";

/** The generator's splits. */
export type Split = "train" | "test";

/** Categories the generator writes, in the order entries cycle through them. */
export const GENERATED_CATEGORIES = ["base", "miss_param", "miss_func", "long_context"] as const;

/** Generator settings. */
export interface GenerateOptions {
  seed: number;
  count: number;
  split: Split;
  /** Classes to draw worlds from (those with a world; order does not matter). Default: every class with a world. */
  classes?: readonly string[];
  /** Categories to cycle through, of GENERATED_CATEGORIES. Default: all of them. */
  categories?: readonly string[];
}

/** FNV-1a over the text: the split of a scenario. */
function splitOf(question: Message[][], config: unknown): Split {
  let h = 0x811c9dc5;
  const text = JSON.stringify([question, config]);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) % 5 === 0 ? "test" : "train";
}

/**
 * Whether a call's result reports a failure: a raised exception, an `error` key (a dict's, or inside a list, as the
 * trading bot answers when logged out), an "Error: ..." string in a list, or a false `..._status` (the travel and
 * message classes' refusals).
 */
function failed(result: string): boolean {
  return result.startsWith(ERROR_PREFIX) || result.startsWith('{"error"') ||
    /^\[\{'error': |^\['Error: |"error": |"[a-z]+_status": false/.test(result);
}

interface Drawn {
  worlds: World[];
  /** The worlds' initial configs as drawn (a snapshot: a world's view may share objects with its config). */
  configs: Record<string, Record<string, unknown>>;
  turns: Request[];
}

/** Draws `nTurns` requests whose calls all run cleanly, replaying from fresh instances each time. */
function draw(rng: Rng, classes: readonly string[], factory: ClassFactory, long: boolean): Drawn | undefined {
  const n = classes.length > 1 && rng.float() < 0.4 ? 2 : 1;
  const chosen = rng.shuffle([...classes]).slice(0, n);
  const worlds = chosen.map((c) => WORLDS[c](rng, long));
  const configs = structuredClone(Object.fromEntries(worlds.map((w) => [w.className, w.config])));
  const scenario = { involvedClasses: chosen, initialConfig: configs, longContext: long };
  const accepted: ParsedCall[] = [];
  const turns: Request[] = [];
  const nTurns = 2 + rng.int(3);
  for (let t = 0, tries = 0; t < nTurns; tries++) {
    if (tries > 40) return undefined;
    const req = worlds[rng.int(worlds.length)].request(rng);
    if (!req) continue;
    const inst = newInstances(scenario, factory);
    const results = accepted.concat(req.calls).map((c) => executeCall(inst, c));
    const own = results.slice(accepted.length);
    if (own.some(failed)) continue;
    req.commit?.(own);
    accepted.push(...req.calls);
    turns.push(req);
    t++;
  }
  return { worlds, configs, turns };
}

/** Builds the entry of category `category` from drawn requests, or undefined when the category does not fit. */
function toEntry(drawn: Drawn, category: string, id: string, rng: Rng): BfclEntry | undefined {
  const user = (content: string): Message[] => [{ role: "user", content }];
  const question: Message[][] = [], groundTruth: string[][] = [];
  const missedFunction: Record<string, string[]> = {};
  const texts = (r: Request) => r.calls.map(callText);
  let special: number | undefined;
  if (category === "miss_param") {
    const options = drawn.turns.map((r, i) => r.vague ? i : -1).filter((i) => i >= 0);
    if (!options.length) return undefined;
    special = options[rng.int(options.length)];
  } else if (category === "miss_func") {
    const used = (i: number) => new Set(drawn.turns.slice(0, i).flatMap((r) => r.calls.map((c) => c.name)));
    const options = drawn.turns.map((r, i) => i > 0 && r.calls.every((c) => !used(i).has(c.name)) ? i : -1)
      .filter((i) => i >= 0);
    if (!options.length) return undefined;
    special = options[rng.int(options.length)];
  }
  drawn.turns.forEach((r, i) => {
    if (i !== special) {
      question.push(user(r.ask));
      groundTruth.push(texts(r));
    } else if (category === "miss_param") {
      question.push(user(r.vague!.ask), user(r.vague!.clarify));
      groundTruth.push([], texts(r));
    } else {
      question.push(user(r.ask), []);
      groundTruth.push([], texts(r));
      missedFunction[String(question.length - 1)] = [...new Set(r.calls.map((c) => c.name))];
    }
  });
  return {
    id,
    category,
    question,
    initialConfig: drawn.configs,
    involvedClasses: drawn.worlds.map((w) => w.className),
    missedFunction,
    groundTruth,
    longContext: category === "long_context",
  };
}

/** The classes with a world among `classes` (default all), in WORLDS' order: a class list is a set. */
function worldClasses(classes: readonly string[] | undefined): string[] {
  const out = Object.keys(WORLDS).filter((c) => !classes || classes.includes(c));
  if (out.length === 0) {
    throw new RangeError(`No generator world for classes ${classes?.join(", ")}; worlds: ${Object.keys(WORLDS)}`);
  }
  return out;
}

/** Attempt `attempt` of `seed`: an entry of `category` with id `id` in whichever split its scenario falls, if any. */
function attemptEntry(
  seed: number,
  attempt: number,
  category: string,
  id: string,
  classes: readonly string[],
  factory: ClassFactory,
): BfclEntry | undefined {
  const rng = new Rng((Math.imul(seed, 0x9e3779b1) ^ Math.imul(attempt, 0x85ebca6b)) | 0);
  const drawn = draw(rng, classes, factory, category === "long_context");
  return drawn && toEntry(drawn, category, id, rng);
}

function checkCategories(categories: readonly string[]): readonly string[] {
  const bad = categories.find((c) => !(GENERATED_CATEGORIES as readonly string[]).includes(c));
  if (bad !== undefined || categories.length === 0) {
    throw new RangeError(
      `The generator writes the categories ${GENERATED_CATEGORIES.join(", ")}; got ${categories.join(", ") || "none"}`,
    );
  }
  return categories;
}

/**
 * `count` entries of `split`, entry i of category categories[i mod their number] (default GENERATED_CATEGORIES), ids
 * `multi_turn_<category>_<i>`. Deterministic in (seed, split, classes, categories).
 */
export function generateEntries(options: GenerateOptions, factory: ClassFactory): BfclEntry[] {
  const classes = worldClasses(options.classes);
  const categories = checkCategories(options.categories ?? GENERATED_CATEGORIES);
  const out: BfclEntry[] = [];
  for (let i = 0, attempt = 0; out.length < options.count; attempt++) {
    if (attempt > options.count * 200 + 1000) {
      throw new RangeError(
        `The generator could not draw ${options.count} ${options.split} entries (got ${out.length})`,
      );
    }
    const category = categories[i % categories.length];
    const entry = attemptEntry(options.seed, attempt, category, `multi_turn_${category}_${i}`, classes, factory);
    if (!entry || splitOf(entry.question, entry.initialConfig) !== options.split) continue;
    out.push(entry);
    i++;
  }
  return out;
}

/** One entry of `split` and `category` drawn from `seed` (pretraining draws one per episode). */
export function generateEntry(
  options: { seed: number; split: Split; category: string; classes?: readonly string[] },
  factory: ClassFactory,
): BfclEntry {
  const classes = worldClasses(options.classes);
  checkCategories([options.category]);
  for (let attempt = 0; attempt < 1000; attempt++) {
    const id = `multi_turn_${options.category}_${options.seed >>> 0}`;
    const entry = attemptEntry(options.seed, attempt, options.category, id, classes, factory);
    if (entry && splitOf(entry.question, entry.initialConfig) === options.split) return entry;
  }
  throw new RangeError(
    `The generator could not draw a ${options.split} ${options.category} entry from ${options.seed}`,
  );
}

/** The split an entry's scenario belongs to (exported for the test that the splits share none). */
export function scenarioSplit(entry: Pick<BfclEntry, "question" | "initialConfig">): Split {
  return splitOf(entry.question, entry.initialConfig);
}
