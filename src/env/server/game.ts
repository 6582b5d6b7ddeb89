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

/** What the server plays: a game that resets to a task index and steps actions, with TextCraft's messages. */
export interface ServedGame {
  reset(index: bigint): string;
  step(action: string): ServedStep;
}

/** A game's refusal that upstream's handler does not catch as a game failure: its text becomes `{"error": text}`. */
export class GameError extends Error {
  override name = "GameError";
}
