/**
 * WebShop's synthetic tasks for pretraining a base model (the Task hook `synthetic`): every episode is a goal of a
 * fresh generated catalogue (generated/generate.ts from a random seed: the same kinds, brands and attributes, drawn
 * anew, with asins from the one pool, so which product an asin names changes every world), played by the oracle
 * (search with the instruction's words, open the product, pick its options, buy). Nothing of the shipped catalogue's
 * assignment of asins to products carries over, so the model must read the pages. Held-out tasks are the goals of one
 * catalogue from a seed training never draws: task i is that catalogue's goal i.
 */
import { loadCatalog } from "./catalog.ts";
import { GENERATED_SIZES, generateFiles } from "./generated/generate.ts";
import { oracleEpisode, type OracleOptions } from "./oracle.ts";
import { serveWebShop } from "./server.ts";
import { buildWorld, type WebShopWorld } from "./world.ts";
import { webShopNames } from "./vocabulary.ts";
import type { SyntheticTasks, TextEpisode } from "../../src/task/task.ts";
import type { Rng } from "../../src/util/random.ts";

/** The world a seed generates: a catalogue of the shipped one's sizes, its synthetic goals. */
export function worldOf(seed: number): WebShopWorld {
  const files = generateFiles({ ...GENERATED_SIZES, seed });
  return buildWorld(loadCatalog(files.products, files.attributes), "synthetic");
}

/** Goal `index` of `world` (mod its goal count) played by the oracle, as text. */
export function playedEpisode(world: WebShopWorld, index: number, o: OracleOptions): TextEpisode {
  const e = oracleEpisode(world, index % world.goals.length, o);
  return { opening: e.opening, turns: e.replies.map((reply, i) => ({ reply, observation: e.observations[i] })) };
}

/** WebShop's synthetic tasks, played by the oracle as `o` says (its replies' form, which product it opens). */
export function webShopSynthetic(o: OracleOptions): SyntheticTasks {
  const heldOut = new Map<number, WebShopWorld>();
  const held = (seed: number) => {
    if (!heldOut.has(seed)) heldOut.set(seed, worldOf(seed));
    return heldOut.get(seed)!;
  };
  return {
    names: webShopNames(),
    episode(rng: Rng): TextEpisode {
      // One seed in 2^31: the shipped catalogue's (0) comes up with that chance, a held-out world's likewise, and the
      // pretraining run refuses an episode whose opening is a held-out task's.
      const world = worldOf(rng.int(2 ** 31));
      return playedEpisode(world, rng.int(world.goals.length), o);
    },
    heldOut: (seed, index) => playedEpisode(held(seed), index, o),
    serve(seed) {
      const world = held(seed);
      const tasks = { count: world.goals.length, about: `WebShop's held-out synthetic catalogue of seed ${seed}` };
      return serveWebShop({ world, tasks }, { port: 0 });
    },
    category: (index) => {
      const goals = [...heldOut.values()][0]?.goals;
      return goals?.[index % goals.length]?.category ?? "unknown";
    },
  };
}
