/**
 * What a game server plays (serve.ts): a game that resets to a task index and steps actions, and the error by which a
 * game refuses a request. No I/O here, so a game's own modules (and the play page's browser bundle, which reaches
 * TextCraft's rules) can import it without the server.
 */

/** One step of a served game: TextCraft's three fields, and an `info` object where the game has one (BFCL). */
export interface ServedStep {
  observation: string;
  reward: number;
  done: boolean;
  info?: Record<string, unknown>;
}

/**
 * A reset's answer: the first observation, and what the game says about the task it loaded (BFCL: the entry's id,
 * category and involved classes), which `/create` and `/reset` pass on as an extra `info` field.
 */
export interface ServedReset {
  observation: string;
  info?: Record<string, unknown>;
}

/** What the server plays: a game that resets to a task index and steps actions, with TextCraft's messages. */
export interface ServedGame {
  reset(index: bigint): string | ServedReset;
  step(action: string): ServedStep;
}

/**
 * The tasks a server holds, as `GET /tasks` answers them: how many (a reset's index is taken mod `count`), the named
 * splits it publishes (index lists), a line saying what they are ("BFCL's files from DIR: 800 entries"), and each
 * task's labels by index, as a reset to it answers them in `info`.
 */
export interface ServedTasks {
  count: number;
  splits?: Record<string, readonly number[]>;
  about?: string;
  labels?: readonly Readonly<Record<string, unknown>>[];
}

/** A game's refusal that upstream's handler does not catch as a game failure: its text becomes `{"error": text}`. */
export class GameError extends Error {
  override name = "GameError";
}
