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
 * holds the executed calls as BFCL writes them with their result texts, and at a turn's end the verdict. EnvTuning's
 * rewards (rewards.ts) are an option, with its per-step codes in `info.code` and its turn rules.
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
import { type ClassFactory, ERROR_PREFIX, executeCall, type Instances, newInstances } from "./execute.ts";
import { callText, type ParsedCall } from "./literal.ts";
import { pyRepr } from "./classes/py.ts";
import { formatStageReward, progressReward, type RewardMode, type StepCode } from "./rewards.ts";
import { stateKey } from "./state_key.ts";

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
  /**
   * The episode's reward: `pass` (BFCL: 1 when every turn passed; default) or EnvTuning's `format` (stages 1-2) or
   * `progress` (stage 3), which also bring EnvTuning's turn rules (5 attempts a turn, then the next turn; a turn
   * without ground truth ends on any readable reply, a call there is not run and scores 0).
   */
  rewards?: RewardMode;
  /** Augmented feedback: a format error is answered with what was wrong (default), else with a bare notice. */
  feedback?: boolean;
}

/** EnvTuning's attempts per turn (`max_step_limit`). */
export const ENVTUNING_ATTEMPTS_PER_TURN = 5;

/** The answer to an unreadable reply when augmented feedback is off. */
export const UNREADABLE_REPLY = "The reply could not be read as calls or an answer.";

/** Crucible's warning before the next question when the model calls functions on a turn it cannot carry out. */
export const EMPTY_TURN_WARNING = "(Warning: this request could not be carried out with the functions and values " +
  "given, so no function should have been called; your calls were not run.) Next request:\n";

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
    /** EnvTuning's code of this reply (-3 format error, -2 a failed call, -1 calls ran, 0/1 a turn's check). */
    code?: StepCode;
    verdict?: { turn: number; valid: boolean; error_type?: string; reason?: string };
    /** At the episode's end: whether every turn passed (BFCL's verdict, whatever the reward mode). */
    passed?: boolean;
  };
}

/** The line that opens the first observation's tool list. */
export const TOOL_LIST_HEADER = "Here is a list of functions in JSON format that you can invoke.";

/** The tool list as the first observation shows it: one JSON document a line. */
export function toolList(docs: readonly FunctionDoc[]): string {
  return `${TOOL_LIST_HEADER}\n${docs.map((d) => JSON.stringify(d)).join("\n")}`;
}

/**
 * The inverse of the first observation's layout (`toolList(docs)`, a blank line, the question): the documents, as
 * BFCL's Qwen FC handler gives them to the template's `tools` (each one `json.dumps`'d into `<tools>` as written in
 * the data, no `{type: "function"}` wrapper), and the question. Undefined when the text opens with no tool list or a
 * line of it is not a JSON object (a server of another kind).
 */
export function splitToolList(observation: string): { tools: FunctionDoc[]; observation: string } | undefined {
  if (!observation.startsWith(`${TOOL_LIST_HEADER}\n`)) return undefined;
  const rest = observation.slice(TOOL_LIST_HEADER.length + 1);
  const end = rest.indexOf("\n\n");
  if (end < 0) return undefined;
  const tools: FunctionDoc[] = [];
  for (const line of rest.slice(0, end).split("\n")) {
    if (line === "") continue;
    try {
      const doc = JSON.parse(line);
      if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return undefined;
      tools.push(doc);
    } catch {
      return undefined;
    }
  }
  return { tools, observation: rest.slice(end + 2) };
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
  #codes: StepCode[] = [];
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

  /** The public state of each involved class's instance as it stands (what BFCL's state checker compares). */
  states(): Record<string, Record<string, unknown>> {
    return Object.fromEntries([...this.#instances.byClass].map(([cls, inst]) => [cls, inst.state()]));
  }

  /** The digest of what the rest of the episode depends on besides the conversation (state_key.ts). */
  stateKey(): string {
    return stateKey(this.#turn, this.#instances);
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
    this.#codes = [];
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
      return { observation: "The episode is over; reset it.", reward: 0, done: true, info: this.#info([]) };
    }
    const envTuning = (this.#options.rewards ?? "pass") !== "pass";
    const decoded = decodeCalls(text, this.#options.format ?? "auto");
    if (decoded.kind === "error" && (envTuning || (this.#options.formatErrors ?? "feedback") === "feedback")) {
      const observation = (this.#options.feedback ?? true) ? decoded.message : UNREADABLE_REPLY;
      return this.#count({ observation, reward: 0, done: false, info: this.#info([], decoded.message) }, -3);
    }
    if (envTuning && this.entry.groundTruth[this.#turn].length === 0) {
      // EnvTuning: a turn without ground truth ends on any readable reply; a call there is not run and scores 0,
      // and fails the turn as BFCL's checker fails it (strict_empty_turns), so the entry does not pass.
      if (decoded.kind === "calls") return this.#endTurn(0, EMPTY_TURN_WARNING, undefined, decoded.calls.length);
      return this.#endTurn(1);
    }
    if (decoded.kind !== "calls") {
      return this.#endTurn(undefined, undefined, decoded.kind === "error" ? decoded.message : undefined);
    }
    const calls = decoded.calls.map((c) => ({ call: callText(c), result: executeCall(this.#instances, c) }));
    this.#steps.push(decoded.calls);
    const code = calls.some((c) => c.result.startsWith(ERROR_PREFIX)) ? -2 : -1;
    const observation = calls.map((c) => c.result).join("\n");
    return this.#count({ observation, reward: 0, done: false, info: this.#info(calls) }, code);
  }

  /** The codes of the replies so far (EnvTuning's per-step codes). */
  get codes(): readonly StepCode[] {
    return this.#codes;
  }

  #info(calls: CallRecord[], formatError?: string): EpisodeStep["info"] {
    return { turn: this.#turn, calls, ...(formatError ? { format_error: formatError } : {}) };
  }

  /**
   * Counts a step with its code. Past BFCL's 20 steps the entry is force-quit (it fails); under EnvTuning's rewards,
   * past 5 attempts the turn is judged as it stands and the next one begins.
   */
  #count(out: EpisodeStep, code: StepCode): EpisodeStep {
    this.#codes.push(code);
    out.info.code = code;
    const envTuning = (this.#options.rewards ?? "pass") !== "pass";
    const limit = envTuning ? ENVTUNING_ATTEMPTS_PER_TURN : MAX_STEPS_PER_TURN;
    if (++this.#stepCount <= limit) return out;
    if (envTuning) {
      const next = this.#endTurn();
      return { ...next, observation: `${out.observation}\n${next.observation}`, info: { ...out.info, ...next.info } };
    }
    this.#done = true;
    const reason = `Model has been forced to quit after ${MAX_STEPS_PER_TURN} steps.`;
    this.#verdicts.push({ valid: false, turn: this.#turn, errorType: "multi_turn:force_terminated", reason });
    const verdict = { turn: this.#turn, valid: false, error_type: "multi_turn:force_terminated", reason };
    return {
      observation: `${out.observation}\n${reason}`,
      reward: 0,
      done: true,
      info: { ...out.info, verdict, passed: false },
    };
  }

  /**
   * Ends the current turn: the checker judges it (its code is the verdict, or `code` where EnvTuning fixes it; `unrun`
   * calls were made on a turn without ground truth and not run), then the next question follows or the episode ends
   * with the mode's reward.
   */
  #endTurn(code?: 0 | 1, prefix?: string, formatError?: string, unrun = 0): EpisodeStep {
    const v = this.#checker.turn(this.#steps, { unrun });
    this.#verdicts.push(v);
    this.#codes.push(code ?? (v.valid ? 1 : 0));
    const verdict = v.valid
      ? { turn: this.#turn, valid: true }
      : { turn: this.#turn, valid: false, error_type: v.errorType, reason: v.reason };
    const info = { ...this.#info([], formatError), verdict, code: this.#codes[this.#codes.length - 1] };
    this.#turn++;
    this.#steps = [];
    this.#stepCount = 0;
    if (this.#turn < this.entry.question.length) {
      return { observation: `${prefix ?? ""}${this.#question(this.#turn)}`, reward: 0, done: false, info };
    }
    this.#done = true;
    const passed = this.#verdicts.every((x) => x.valid);
    const mode = this.#options.rewards ?? "pass";
    const reward = mode === "format"
      ? formatStageReward(this.#codes)
      : mode === "progress"
      ? progressReward(this.#codes)
      : passed
      ? 1
      : 0;
    const observation = `${prefix ?? ""}${passed ? "All requests handled." : "The conversation is over."}`;
    return { observation, reward, done: true, info: { ...info, passed } };
  }
}
