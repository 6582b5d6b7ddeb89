/**
 * One BFCL episode as the server plays it, under BFCL's inference rules (`base_handler.py`): the first observation
 * lists the tools and asks the first user turn; each reply with calls runs them on the episode's own instances and
 * answers with their results; a reply with no call ends the user turn, which the checker (checker.ts) then judges;
 * the next turn's question follows, or, on a held-out-function turn, the missing functions' documents with BFCL's
 * sentence. More than 20 steps in one turn force-quit the entry (it fails). The episode ends after the last turn
 * with reward 1 when every turn passed, else 0.
 *
 * A reply that does not decode is, by default, answered with the format error and the turn goes on (counting as a
 * step); `formatErrors: "end_turn"` instead reads it as BFCL's decoder does, as the turn's end. Every step's `info`
 * holds the executed calls as BFCL writes them with their result texts, and at a turn's end the verdict.
 *
 * @example
 * ```ts
 * const ep = new BfclEpisode(entry, docs, newInstance);
 * ep.reset();                          // "Here is a list of functions ...\n\nMove 'final_report.pdf' ..."
 * ep.step("[cd(folder='document')]");  // { observation: '{"current_working_directory": "document"}', ... }
 * ```
 */
import { type CallFormat, decodeCalls } from "./calls.ts";
import { type CheckOptions, TurnChecker, type Verdict } from "./checker.ts";
import type { BfclEntry, FunctionDoc } from "./entries.ts";
import { type ClassFactory, executeCall, type Instances, newInstances } from "./execute.ts";
import { callText, type ParsedCall } from "./literal.ts";
import { pyRepr } from "./classes/py.ts";

/** BFCL's step limit per user turn (`MAXIMUM_STEP_LIMIT`). */
export const MAX_STEPS_PER_TURN = 20;

/** BFCL's sentence after the held-out functions' documents (`DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC`). */
export const ADDITIONAL_FUNCTION_SENTENCE = "I have updated some more functions you can choose from. What about now?";

/** Episode settings. */
export interface EpisodeOptions extends CheckOptions {
  /** The reply form (calls.ts). Default `auto`. */
  format?: CallFormat;
  /** A reply that does not decode: answered with the error (`feedback`, default) or the turn's end (`end_turn`). */
  formatErrors?: "feedback" | "end_turn";
}

/** One executed call: BFCL's text of it and its result text. */
export interface CallRecord {
  call: string;
  result: string;
}

/** A step's outcome with BFCL's info. */
export interface EpisodeStep {
  observation: string;
  reward: number;
  done: boolean;
  info: {
    turn: number;
    calls: CallRecord[];
    format_error?: string;
    verdict?: { turn: number; valid: boolean; error_type?: string; reason?: string };
  };
}

/** The tool list as the first observation shows it: one JSON document a line. */
export function toolList(docs: readonly FunctionDoc[]): string {
  return `Here is a list of functions in JSON format that you can invoke.\n${
    docs.map((d) => JSON.stringify(d)).join("\n")
  }`;
}

/** The documents of an entry's classes less its held-out functions, and the held-out ones by turn. */
export function entryDocs(
  entry: BfclEntry,
  docs: Readonly<Record<string, readonly FunctionDoc[]>>,
): { start: FunctionDoc[]; held: Record<string, FunctionDoc[]> } {
  const all = entry.involvedClasses.flatMap((c) => docs[c] ?? []);
  const held: Record<string, FunctionDoc[]> = {};
  const heldNames = new Set<string>();
  for (const [turn, names] of Object.entries(entry.missedFunction)) {
    held[turn] = names.map((n) => all.find((d) => d.name === n)).filter((d): d is FunctionDoc => d !== undefined);
    names.forEach((n) => heldNames.add(n));
  }
  return { start: all.filter((d) => !heldNames.has(d.name)), held };
}

/** One entry played over the protocol. */
export class BfclEpisode {
  readonly entry: BfclEntry;
  readonly #docs: ReturnType<typeof entryDocs>;
  readonly #factory: ClassFactory;
  readonly #options: EpisodeOptions;
  #instances!: Instances;
  #checker!: TurnChecker;
  #turn = 0;
  #steps: ParsedCall[][] = [];
  #stepCount = 0;
  #verdicts: Verdict[] = [];
  #done = false;

  constructor(
    entry: BfclEntry,
    docs: Readonly<Record<string, readonly FunctionDoc[]>>,
    factory: ClassFactory,
    options: EpisodeOptions = {},
  ) {
    this.entry = entry;
    this.#docs = entryDocs(entry, docs);
    this.#factory = factory;
    this.#options = options;
  }

  /** Per-turn verdicts so far (for progress rewards). */
  get verdicts(): readonly Verdict[] {
    return this.#verdicts;
  }

  /** Starts the episode over and returns the first observation: the tools and the first question. */
  reset(): string {
    this.#instances = newInstances(this.entry, this.#factory);
    this.#checker = new TurnChecker(this.entry, this.#factory, this.#options);
    this.#turn = 0;
    this.#steps = [];
    this.#stepCount = 0;
    this.#verdicts = [];
    this.#done = false;
    return `${toolList(this.#docs.start)}\n\n${this.#question(0)}`;
  }

  /** The user's text of turn t: its messages, or the held-out documents with BFCL's sentence. */
  #question(t: number): string {
    const held = this.#docs.held[String(t)];
    if (held && this.entry.question[t].length === 0) return `${pyRepr(held)}\n${ADDITIONAL_FUNCTION_SENTENCE}`;
    return this.entry.question[t].map((m) => m.content).join("\n");
  }

  /** Applies one reply. */
  step(text: string): EpisodeStep {
    if (this.#done) {
      return {
        observation: "The episode is over; reset it.",
        reward: 0,
        done: true,
        info: { turn: this.#turn, calls: [] },
      };
    }
    const decoded = decodeCalls(text, this.#options.format ?? "auto");
    if (decoded.kind === "error" && (this.#options.formatErrors ?? "feedback") === "feedback") {
      return this.#count({
        observation: decoded.message,
        reward: 0,
        done: false,
        info: this.#info([], decoded.message),
      });
    }
    if (decoded.kind !== "calls") return this.#endTurn(decoded.kind === "error" ? decoded.message : undefined);
    const calls = decoded.calls.map((c) => ({ call: callText(c), result: executeCall(this.#instances, c) }));
    this.#steps.push(decoded.calls);
    return this.#count({
      observation: calls.map((c) => c.result).join("\n"),
      reward: 0,
      done: false,
      info: this.#info(calls),
    });
  }

  #info(calls: CallRecord[], formatError?: string): EpisodeStep["info"] {
    return { turn: this.#turn, calls, ...(formatError ? { format_error: formatError } : {}) };
  }

  /** Counts a step; past the limit the entry is force-quit. */
  #count(out: EpisodeStep): EpisodeStep {
    if (++this.#stepCount <= MAX_STEPS_PER_TURN) return out;
    this.#done = true;
    const reason = `Model has been forced to quit after ${MAX_STEPS_PER_TURN} steps.`;
    this.#verdicts.push({ valid: false, turn: this.#turn, errorType: "multi_turn:force_terminated", reason });
    return {
      observation: `${out.observation}\n${reason}`,
      reward: 0,
      done: true,
      info: {
        ...out.info,
        verdict: { turn: this.#turn, valid: false, error_type: "multi_turn:force_terminated", reason },
      },
    };
  }

  #endTurn(formatError?: string): EpisodeStep {
    const v = this.#checker.turn(this.#steps);
    this.#verdicts.push(v);
    const verdict = v.valid
      ? { turn: this.#turn, valid: true }
      : { turn: this.#turn, valid: false, error_type: v.errorType, reason: v.reason };
    const info = { ...this.#info([], formatError), verdict };
    this.#turn++;
    this.#steps = [];
    this.#stepCount = 0;
    if (this.#turn >= this.entry.question.length) {
      this.#done = true;
      const passed = this.#verdicts.every((x) => x.valid);
      return {
        observation: passed ? "All requests handled." : "The conversation is over.",
        reward: passed ? 1 : 0,
        done: true,
        info,
      };
    }
    return { observation: this.#question(this.#turn), reward: 0, done: false, info };
  }
}
