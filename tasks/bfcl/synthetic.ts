/**
 * BFCL's synthetic tasks for pretraining a base model (the Task hook `synthetic`): generated train entries
 * (generator.ts), each played by the oracle (its ground truth, then the turn's end) through a real episode, so the
 * model sees the tool list, the questions and the classes' own results; a curriculum from mostly `base` entries to
 * the three categories alike; and a server of held-out entries (the test side of the scenario split, from a seed
 * training never uses) for measuring success on scenarios the model has not seen.
 */
import type { Rng } from "../../src/util/random.ts";
import type { SyntheticTasks, TextEpisode } from "../../src/task/task.ts";
import { newInstance } from "./classes/api.ts";
import type { BfclEntry } from "./entries.ts";
import { BfclEpisode, type EpisodeOptions } from "./episode.ts";
import { GENERATED_CATEGORIES, generateEntry } from "./generator.ts";
import { oracleReplies } from "./oracle.ts";
import type { BfclOptions } from "./options.ts";
import { serveBfcl } from "./server.ts";
import { GENERATED_DOCS } from "./tool_docs.ts";

/** Held-out entries a synthetic server holds; task index i plays entry i mod this. */
export const HELD_OUT_SERVED = 256;

/** Plays `entry` with the oracle and returns the episode as text. */
export function playedEpisode(entry: BfclEntry, options: BfclOptions, episode: EpisodeOptions): TextEpisode {
  const ep = new BfclEpisode(entry, GENERATED_DOCS, newInstance, episode);
  const opening = ep.reset();
  const source = { entries: [entry], docs: GENERATED_DOCS };
  const turns = oracleReplies(source, 0, options).map((reply) => ({ reply, observation: ep.step(reply).observation }));
  return { opening, turns };
}

/** Held-out entry `index` of `seed`: category by index, drawn from the test side of the split. */
function heldOutEntry(seed: number, index: number): BfclEntry {
  const category = GENERATED_CATEGORIES[index % GENERATED_CATEGORIES.length];
  return generateEntry({ seed: (Math.imul(seed, 7919) + index) | 0, split: "test", category }, newInstance);
}

/** BFCL's synthetic tasks under the task's options (their call format and episode rules). */
export function bfclSynthetic(options: BfclOptions, episode: EpisodeOptions): SyntheticTasks {
  const names = [...new Set(Object.values(GENERATED_DOCS).flat().map((d) => d.name))];
  return {
    names,
    episode(rng: Rng, progress: number): TextEpisode {
      // Early on two in three entries are base ones; by the end the three categories are drawn alike.
      const pBase = 2 / 3 - (1 / 3) * Math.min(1, Math.max(0, progress));
      const category = rng.float() < pBase ? "base" : rng.float() < 0.5 ? "miss_param" : "miss_func";
      const entry = generateEntry({ seed: rng.int(2 ** 31), split: "train", category }, newInstance);
      return playedEpisode(entry, options, episode);
    },
    heldOut: (seed, index) => playedEpisode(heldOutEntry(seed, index), options, episode),
    serve(seed: number) {
      const entries = Array.from({ length: HELD_OUT_SERVED }, (_, i) => heldOutEntry(seed, i));
      return serveBfcl({ port: 0, source: { entries, docs: GENERATED_DOCS }, episode });
    },
    category: (index) => GENERATED_CATEGORIES[index % GENERATED_CATEGORIES.length],
  };
}
