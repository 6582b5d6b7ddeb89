/**
 * BFCL's multi-turn checker (`multi_turn_checker.py`). The model's calls and the ground truth are replayed on two
 * sets of fresh instances, turn by turn (instances persist across turns). After each turn with ground truth:
 *
 * - a turn with ground truth needs at least one decoded model step;
 * - the state check: every public attribute of every instance equal (Python's `==`: 1 == 1.0, dicts unordered);
 * - the response check: the turn's ground-truth results an unordered sub-multiset of all the model's results so far.
 *
 * A turn with empty ground truth must hold no call (BFCL's `multi_turn_irrelevance_checker`; BFCL's runner at v4
 * leaves it commented out, so `strictEmptyTurns: false` reproduces its leaderboard, while the default follows the
 * checker's own rule). Model calls on such a turn still run, so later state checks see them. An entry passes when
 * every turn does; a failure names the turn and the reason.
 *
 * @example
 * ```ts
 * const verdict = checkEntry(entry, modelTurns, newInstance);
 * verdict.valid || console.log(verdict.turn, verdict.reason);
 * ```
 */
import { type ClassFactory, executeCall, type Instances, newInstances, type Scenario } from "./execute.ts";
import { parseCallList, type ParsedCall } from "./literal.ts";
import { PyFloat } from "./classes/py.ts";

/** The checker's result for one turn or a whole entry. */
export type Verdict =
  | { valid: true }
  | { valid: false; turn: number; errorType: string; reason: string; details?: unknown };

/** What the checker needs of an entry. */
export interface CheckedEntry extends Scenario {
  id: string;
  groundTruth: readonly (readonly string[])[];
}

/** Options of the checker. */
export interface CheckOptions {
  /** Whether a turn with empty ground truth fails when the model calls anything there. Default true. */
  strictEmptyTurns?: boolean;
}

/** Parses a ground-truth call string; a bad one names the entry and turn (the data, not the model, is wrong). */
export function parseGroundTruth(entry: { id: string }, turn: number, text: string): ParsedCall {
  try {
    const calls = parseCallList(text);
    if (calls.length !== 1) throw new SyntaxError(`expected exactly one call, got ${calls.length}`);
    return calls[0];
  } catch (e) {
    throw new SyntaxError(
      `Entry ${entry.id}, field "ground_truth", turn ${turn}: cannot parse ${JSON.stringify(text)}: ${
        (e as Error).message
      }`,
    );
  }
}

function num(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

function entriesOf(v: object): [string, unknown][] {
  return v instanceof Map ? [...v.entries()].map(([k, x]) => [String(k), x]) : Object.entries(v);
}

/** Python's `==` over the classes' values: numbers by value (bool and float included), dicts by key set. */
export function pyEqual(a: unknown, b: unknown): boolean {
  const na = num(a), nb = num(b);
  if (na !== undefined || nb !== undefined) return na === nb;
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEqual(x, b[i]));
  }
  if (a instanceof Set || b instanceof Set) {
    return a instanceof Set && b instanceof Set && a.size === b.size && [...a].every((x) => b.has(x));
  }
  const ea = entriesOf(a), eb = new Map(entriesOf(b));
  return ea.length === eb.size && ea.every(([k, x]) => eb.has(k) && pyEqual(x, eb.get(k)));
}

/** Whether `need` is an unordered sub-multiset of `have`; returns the missing items. */
export function missingItems(need: readonly string[], have: readonly string[]): string[] {
  const pool = [...have], missing: string[] = [];
  for (const item of need) {
    const i = pool.indexOf(item);
    if (i < 0) missing.push(item);
    else pool.splice(i, 1);
  }
  return missing;
}

/**
 * The checker as it goes: feed each turn's decoded model steps with `turn()`, get that turn's verdict. Used by the
 * server at each user turn's end and by `checkEntry` over a whole transcript.
 */
export class TurnChecker {
  readonly #entry: CheckedEntry;
  readonly #model: Instances;
  readonly #truth: Instances;
  readonly #strict: boolean;
  readonly #allModelResults: string[] = [];
  #next = 0;

  constructor(entry: CheckedEntry, factory: ClassFactory, options: CheckOptions = {}) {
    this.#entry = entry;
    this.#model = newInstances(entry, factory);
    this.#truth = newInstances(entry, factory);
    this.#strict = options.strictEmptyTurns ?? true;
  }

  /**
   * Checks the next turn given the model's non-empty decoded steps (each a list of calls) in that turn. `unrun`
   * counts calls the model made that were not run (EnvTuning's rule for a turn without ground truth): they fail such
   * a turn as run ones do, and change no state.
   */
  turn(steps: readonly (readonly ParsedCall[])[], options: { unrun?: number } = {}): Verdict {
    const t = this.#next++;
    if (t >= this.#entry.groundTruth.length) throw new RangeError(`Entry ${this.#entry.id} has only ${t} turns`);
    const decoded = steps.filter((s) => s.length > 0);
    for (const step of decoded) for (const c of step) this.#allModelResults.push(executeCall(this.#model, c));
    const gt = this.#entry.groundTruth[t];
    const gtResults = gt.map((text) => executeCall(this.#truth, parseGroundTruth(this.#entry, t, text)));
    if (gt.length === 0) {
      if (this.#strict && (decoded.length > 0 || (options.unrun ?? 0) > 0)) {
        return fail(
          t,
          "multi_turn:irrelevance_error:decoder_success",
          "Model outputs valid function calls when it should not",
          decoded,
        );
      }
      return { valid: true };
    }
    if (decoded.length === 0) {
      return fail(t, "multi_turn:empty_turn_model_response", "Model response list is empty");
    }
    for (const [cls, truth] of this.#truth.byClass) {
      const model = this.#model.byClass.get(cls)!;
      const want = truth.state(), got = model.state();
      const differences: Record<string, { model: unknown; ground_truth: unknown }> = {};
      for (const [k, v] of Object.entries(want)) {
        if (!k.startsWith("_") && !pyEqual(got[k], v)) differences[k] = { model: got[k], ground_truth: v };
      }
      if (Object.keys(differences).length > 0) {
        return fail(
          t,
          "multi_turn:instance_state_mismatch",
          `Model instance for ${cls} does not match the state with ground truth instance (${
            Object.keys(differences).join(", ")
          } differ)`,
          differences,
        );
      }
    }
    const missing = missingItems(gtResults, this.#allModelResults);
    if (missing.length > 0) {
      return fail(
        t,
        "multi_turn:execution_response_mismatch",
        "Model response execution results so far does not contain all the ground truth response execution results",
        { missing_items: missing },
      );
    }
    return { valid: true };
  }
}

function fail(turn: number, errorType: string, reason: string, details?: unknown): Verdict {
  return { valid: false, turn, errorType, reason: `${reason} for turn ${turn}.`, details };
}

/**
 * Checks a whole transcript: `modelTurns[t]` holds turn t's decoded steps. A transcript with fewer turns than the
 * ground truth (the model was forced to quit) fails; otherwise the first failing turn's verdict, else valid.
 */
export function checkEntry(
  entry: CheckedEntry,
  modelTurns: readonly (readonly (readonly ParsedCall[])[])[],
  factory: ClassFactory,
  options: CheckOptions = {},
): Verdict {
  if (modelTurns.length !== entry.groundTruth.length) {
    return fail(
      modelTurns.length,
      "multi_turn:force_terminated",
      `Model was force-terminated during inference phase: ${modelTurns.length} turns of ${entry.groundTruth.length}`,
    );
  }
  const checker = new TurnChecker(entry, factory, options);
  for (const steps of modelTurns) {
    const v = checker.turn(steps);
    if (!v.valid) return v;
  }
  return { valid: true };
}
