/**
 * BFCL's synthetic tasks for pretraining a base model (the Task hook `synthetic`): generated train entries
 * (generator.ts), each played by the oracle (its ground truth, then the turn's end) through a real episode, so the
 * model sees the tool list, the questions and the classes' own results, over the classes and categories of
 * `task_options.generated_*`; a curriculum from mostly `base` entries to the categories alike; and a server of
 * held-out entries (the test side of the scenario split, from a seed training never uses) for measuring success on
 * scenarios the model has not seen.
 */
import type { Rng } from "../../src/util/random.ts";
import type { SyntheticTasks, TextEpisode } from "../../src/task/task.ts";
import { newInstance } from "./classes/api.ts";
import type { BfclEntry } from "./entries.ts";
import { BfclEpisode, type EpisodeOptions } from "./episode.ts";
import { GENERATED_CATEGORIES, generateEntry } from "./generator.ts";
import { oracleReplies } from "./oracle.ts";
import { type BfclOptions, generatedSet } from "./options.ts";
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

/** The classes (undefined: all) and categories the options' generated set draws. */
function drawnSet(options: BfclOptions): { classes?: readonly string[]; categories: readonly string[] } {
  const set = generatedSet(options);
  return { classes: set.classes ?? undefined, categories: set.categories ?? GENERATED_CATEGORIES };
}

/** Held-out entry `index` of `seed`: category by index, drawn from the test side of the split. */
function heldOutEntry(seed: number, index: number, options: BfclOptions): BfclEntry {
  const { classes, categories } = drawnSet(options);
  const category = categories[index % categories.length];
  return generateEntry({ seed: (Math.imul(seed, 7919) + index) | 0, split: "test", category, classes }, newInstance);
}

/** BFCL's synthetic tasks under the task's options (their call format and episode rules). */
export function bfclSynthetic(options: BfclOptions, episode: EpisodeOptions): SyntheticTasks {
  const names = [...new Set(Object.values(GENERATED_DOCS).flat().map((d) => d.name))];
  const { classes, categories } = drawnSet(options);
  const others = categories.filter((c) => c !== "base");
  return {
    names,
    episode(rng: Rng, progress: number): TextEpisode {
      // Early on two in three entries are base ones; by the end the k categories are drawn alike (1/k each).
      const k = categories.length, t = Math.min(1, Math.max(0, progress));
      const pBase = others.length === k ? 0 : others.length === 0 ? 1 : 2 / 3 - (2 / 3 - 1 / k) * t;
      const category = rng.float() < pBase ? "base" : others[Math.floor(rng.float() * others.length)];
      const entry = generateEntry({ seed: rng.int(2 ** 31), split: "train", category, classes }, newInstance);
      return playedEpisode(entry, options, episode);
    },
    heldOut: (seed, index) => playedEpisode(heldOutEntry(seed, index, options), options, episode),
    serve(seed: number) {
      const entries = Array.from({ length: HELD_OUT_SERVED }, (_, i) => heldOutEntry(seed, i, options));
      return serveBfcl({ port: 0, source: { entries, docs: GENERATED_DOCS }, episode });
    },
    category: (index) => categories[index % categories.length],
  };
}
