/**
 * What a game server plays (serve.ts): a game that resets to a task index and steps actions, and the error by which a
 * game refuses a request. No I/O here, so a game's own modules (and the play page's browser bundle, which reaches
 * TextCraft's rules) can import it without the server.
 */

/** One step of a served game: TextCraft's three fields, and an `info` object where the game has one (BFCL). */
export interface ServedStep {
  /** What the game says after the action. */
  observation: string;
  /** The step's reward. */
  reward: number;
  /** Whether the episode has ended. */
  done: boolean;
  /** Anything the game says beyond AgentGym's fields (sent as `info`). */
  info?: Record<string, unknown>;
}

/**
 * A reset's answer: the first observation, and what the game says about the task it loaded (BFCL: the entry's id,
 * category and involved classes), which `/create` and `/reset` pass on as an extra `info` field.
 */
export interface ServedReset {
  /** The first observation of the task the game was reset to. */
  observation: string;
  /** What the game says about the task (sent as `info`). */
  info?: Record<string, unknown>;
}

/** What the server plays: a game that resets to a task index and steps actions, with TextCraft's messages. */
export interface ServedGame {
  /** Starts task `index` over: its first observation, or that with its info. */
  reset(index: bigint): string | ServedReset;
  /** Plays one action. */
  step(action: string): ServedStep;
}

/**
 * The tasks a server holds, as `GET /tasks` answers them: how many (a reset's index is taken mod `count`), the named
 * splits it publishes (index lists), a line saying what they are ("BFCL's files from DIR: 800 entries"), and each
 * task's labels by index, as a reset to it answers them in `info`.
 */
export interface ServedTasks {
  /** How many tasks the server holds. */
  count: number;
  /** The task indices of each named split, where the server has splits. */
  splits?: Record<string, readonly number[]>;
  /** A line about where the tasks come from, for messages. */
  about?: string;
  /** One object of labels per task (id, category, ...), where the server has them. */
  labels?: readonly Readonly<Record<string, unknown>>[];
}

/** A game's refusal that upstream's handler does not catch as a game failure: its text becomes `{"error": text}`. */
export class GameError extends Error {
  override name = "GameError";
}
