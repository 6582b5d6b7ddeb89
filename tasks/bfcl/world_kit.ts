/**
 * What every generator world (worlds.ts and the world_*.ts files) is made of: the request and world shapes, and the
 * small helpers and word lists they share.
 */
import type { ParsedCall, PyValue } from "./literal.ts";
import type { Rng } from "../../src/util/random.ts";

/** One drawn request: its sentence, its ground-truth calls and, optionally, a vague sentence and its clarification. */
export interface Request {
  ask: string;
  calls: ParsedCall[];
  vague?: { ask: string; clarify: string };
  /** Updates the world's view once the calls ran; `results` are their result texts. */
  commit?(results: string[]): void;
}

/** One class's world in one entry. */
export interface World {
  readonly className: string;
  /** The class's part of `initial_config`. */
  readonly config: Record<string, unknown>;
  /** A random request valid in the current view, or undefined when none fits. */
  request(rng: Rng): Request | undefined;
}

/**
 * Draws a class's world. `long` asks for the long-context category's much larger initial state (many files, messages,
 * tickets, orders, cards); without it the original four worlds draw exactly the numbers they drew before the option
 * existed, so their seeds keep their entries.
 */
export type WorldFactory = (rng: Rng, long?: boolean) => World;

/** A request template: a request valid in the world's current view, or undefined when none fits. */
export type Template = (rng: Rng) => Request | undefined;

/** Words for file names, contents, titles and tweets. */
export const WORDS = [
  "budget",
  "report",
  "draft",
  "summary",
  "invoice",
  "notes",
  "plan",
  "review",
  "agenda",
  "roadmap",
  "metrics",
  "archive",
  "backup",
  "photos",
  "music",
  "project",
  "research",
  "travel",
  "recipes",
  "letters",
];
/** User names of the ticket and posting worlds. */
export const PEOPLE = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"];

/** A random element; undefined (typed as T, callers test it) for an empty list. */
export function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[xs.length ? rng.int(xs.length) : 0];
}

/** A ground-truth call with keyword arguments. */
export function call(name: string, args: Record<string, PyValue>): ParsedCall {
  return { name, args, positional: [] };
}

/** `n` random words. */
export function sentence(rng: Rng, n: number): string {
  return Array.from({ length: n }, () => pick(rng, WORDS)).join(" ");
}

/** A string of `n` random decimal digits (the generator's int() draws at most 2^24, so a digit at a time). */
export function digits(rng: Rng, n: number): string {
  return Array.from({ length: n }, (_, i) => String(i === 0 ? 1 + rng.int(9) : rng.int(10))).join("");
}

/** The value of a key in a JSON result text (the generator's results are `json.dumps` of dicts), or undefined. */
export function resultField(result: string | undefined, key: string): unknown {
  try {
    const v = JSON.parse(result ?? "");
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v[key] : undefined;
  } catch {
    return undefined;
  }
}
