/**
 * Fresh copies of WebShop's oracle episodes for each SFT epoch (task_options.rename_asins): with chance p an episode's
 * asins are renamed, the same way on every page and in every reply of the episode, to asins drawn from the generated
 * catalogues' pool (generated/generate.ts, all in the tiny model's vocabulary). Which asin a training goal's product
 * has is then worth nothing to remember: a model must copy the asin the results page shows. Measured on the shipped
 * catalogue (docs/webshop.md): warmed up on unchanged episodes, the tiny base clicks asins of train products on
 * held-out goals.
 */
import type { AugmentContext, TextEpisode } from "../../src/task/task.ts";
import type { Rng } from "../../src/util/random.ts";
import { ASIN_POOL } from "./generated/generate.ts";

/** A rewrite of one episode for one epoch. */
export type Augment = (episode: TextEpisode, c: AugmentContext) => TextEpisode;

/** An asin as the pages and replies write it: B0 and eight capitals or digits. */
const ASIN = /\bB0[0-9A-Z]{8}\b/g;

/** The distinct asins of an episode, in order of first appearance (opening, then each reply and observation). */
export function episodeAsins(episode: TextEpisode): string[] {
  const texts = [episode.opening, ...episode.turns.flatMap((t) => [t.reply, t.observation])];
  return [...new Set(texts.flatMap((t) => t.match(ASIN) ?? []))];
}

/** `k` distinct asins of the pool, drawn from `rng` (a partial shuffle of the pool). */
function drawAsins(rng: Rng, k: number): string[] {
  if (k > ASIN_POOL.length) {
    throw new RangeError(`An episode shows ${k} asins, more than the pool's ${ASIN_POOL.length}`);
  }
  const pool = [...ASIN_POOL];
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(pool.length - i);
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, k);
}

/** `episode` with every asin replaced as `names` maps it (asins it does not name stay). */
export function renameAsins(episode: TextEpisode, names: ReadonlyMap<string, string>): TextEpisode {
  const swap = (text: string) => text.replace(ASIN, (a) => names.get(a) ?? a);
  return {
    opening: swap(episode.opening),
    turns: episode.turns.map((t) => ({ ...t, reply: swap(t.reply), observation: swap(t.observation) })),
  };
}

/**
 * The rewrite `rename_asins` = `chance` asks for, or undefined at 0. Draws from `c.rng` in a fixed order (whether to
 * rename, then the new names in order of first appearance), so a seeded generator replays an epoch.
 */
export function webShopAugment(chance: number): Augment | undefined {
  if (chance === 0) return undefined;
  return (episode, c) => {
    if (c.rng.float() >= chance) return episode;
    const asins = episodeAsins(episode);
    const drawn = drawAsins(c.rng, asins.length);
    return renameAsins(episode, new Map(asins.map((a, i) => [a, drawn[i]])));
  };
}
