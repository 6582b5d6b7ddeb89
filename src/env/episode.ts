/**
 * One episode against any environment: create, reset to a task, then alternate the policy's text and the
 * environment's answer until `done` or the round limit, and close. The outcome separates an environment failure
 * (`env_failure`, with the `EnvError`) from an episode that simply earned nothing.
 *
 * @example
 * ```ts
 * const result = await runEpisode(client, {
 *   index: 12,
 *   maxRounds: 30,
 *   parseAction: textcraft.parseAction,
 *   act: async (observation) => `Thought: ...\n\nAction:\ninventory`,
 * });
 * if (result.outcome === "env_failure") console.warn(result.error.message);
 * ```
 */
import type { StepResult } from "./adapter.ts";
import type { ActionParse, EnvClient } from "./client.ts";
import { EnvError } from "./errors.ts";

/** One round: what the policy said and what came back. */
export interface Turn extends StepResult {
  text: string;
}

/** How an episode ended. `reward` is the last step's reward, as upstream records it (not a sum). */
export type EpisodeResult =
  | { outcome: "done" | "max_rounds"; index: number; reward: number; first: string; turns: Turn[] }
  | { outcome: "env_failure"; index: number; reward: null; first: string; turns: Turn[]; error: EnvError };

/** Settings of `runEpisode`. */
export interface EpisodeOptions {
  /** Task index passed to reset. */
  index: number;
  /** Most policy turns; upstream's TextCraft runs use 20 or 30. */
  maxRounds: number;
  /** The policy: the latest observation and the turns so far -> the model's text. */
  act: (observation: string, turns: readonly Turn[]) => Promise<string> | string;
  /** The task's action extraction. */
  parseAction?: (text: string) => ActionParse;
}

/** Runs one episode; only `EnvError`s are caught (and reported), anything else is rethrown. */
export async function runEpisode(client: EnvClient, options: EpisodeOptions): Promise<EpisodeResult> {
  if (!Number.isInteger(options.maxRounds) || options.maxRounds < 1) {
    throw new RangeError(`maxRounds must be a positive integer, got ${options.maxRounds}`);
  }
  const turns: Turn[] = [];
  let first = "";
  let session;
  try {
    session = await client.create({ parseAction: options.parseAction });
    await session.reset(options.index);
    first = await session.observe();
    let observation = first;
    let last: StepResult = { observation, reward: 0, done: false };
    while (turns.length < options.maxRounds && !last.done) {
      const text = await options.act(observation, turns);
      last = await session.step(text);
      turns.push({ text, ...last });
      observation = last.observation;
    }
    return { outcome: last.done ? "done" : "max_rounds", index: options.index, reward: last.reward, first, turns };
  } catch (e) {
    if (!(e instanceof EnvError)) throw e;
    return { outcome: "env_failure", index: options.index, reward: null, first, turns, error: e };
  } finally {
    // A failed close must not hide the episode's result; the server reclaims nothing either way.
    await session?.close().catch(() => {});
  }
}
