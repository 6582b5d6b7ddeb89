/**
 * TextCraft's RL worlds (the Task hook `rlWorlds`, `data.synthetic_prompts`): fresh random crafting worlds
 * (worlds.ts) among an RL step's prompts, played by a server that serves TextCraft's own tasks below task index
 * `RL_WORLDS_FIRST` and world k at `RL_WORLDS_FIRST + k`.
 *
 * What keeps them apart from what the model is measured on or has seen:
 * - Test goals: a world's names are drawn from the game's item names less every name of a goal of the excluded
 *   tasks (the run's test split, as the embedded server resets them), so no test goal appears in a world at all, as
 *   goal, ingredient or distractor. Recipes are random graphs over the names, never read from the game's tables.
 * - Pretraining: world k is drawn from its own generator, seeded from (seed, k) through a mix that neither
 *   pretraining's batches (src/pretrain/data.ts) nor its held-out worlds (synthetic.ts) use, over that reduced name
 *   list; the trainer also refuses a seed equal to pretraining's.
 */
import { serveTextCraft } from "./game/server.ts";
import { TextCraftGame } from "./game/game.ts";
import { idToName } from "./game/python.ts";
import type { CraftingTree } from "./game/tree.ts";
import type { ServedGame } from "../../src/env/server/serve.ts";
import { Rng } from "../../src/util/random.ts";
import type { RlWorlds, RlWorldsOptions } from "../../src/task/task.ts";
import { SYNTHETIC_MAX_TURNS } from "./synthetic.ts";
import { type World, worldEpisode, WorldGame } from "./worlds.ts";
import { type RewardShaping, shapedGame, shapingOn } from "./shaping.ts";
import { tagMembers } from "./demos.ts";

/**
 * The task index of RL world 0. Far past TextCraft's 545 goals; an upstream server would wrap such an index onto a
 * real goal (index mod goals), which is why the worlds need Crucible's own server.
 */
export const RL_WORLDS_FIRST = 1_000_000;

/** The item names RL worlds draw from: the game's, less the goals of the `exclude` task indices. */
export function rlWorldNames(tree: CraftingTree, exclude: readonly number[]): string[] {
  const n = tree.goals.length;
  // The embedded server resets task i to goals[i mod n] (Python's modulo), so these are the excluded goals it plays.
  const banned = new Set(exclude.map((i) => idToName(tree.goals[((i % n) + n) % n].id)));
  return [...tree.items].map(idToName).filter((name) => !banned.has(name));
}

/** The generator seed of world k of `seed`: a mix of its own (see the module's header). */
export function rlWorldSeed(seed: number, k: number): number {
  let h = Math.imul(seed ^ 0x3c6ef372, 0x27d4eb2f) ^ Math.imul(k + 0x51ed27, 0x165667b1);
  h ^= h >>> 15;
  return Math.imul(h, 0x85ebca6b) ^ (h >>> 13);
}

/**
 * World k of `seed` over `names`: depth `depths[k mod depths.length]`, up to ten distractors as TextCraft draws
 * them, and a stack plan of at most SYNTHETIC_MAX_TURNS turns (so it is solvable in the rounds of a run).
 */
export function rlWorld(names: readonly string[], o: { seed: number; depths: readonly number[]; k: number }): World {
  const depth = o.depths[o.k % o.depths.length];
  return worldEpisode(new Rng(rlWorldSeed(o.seed, o.k)), names, { depth, maxTurns: SYNTHETIC_MAX_TURNS }).world;
}

/**
 * TextCraft's RL worlds over `tree`, at the depths of task_options.rl_world_depths; with `shaping` on, the tasks and
 * the worlds alike pay the shaped reward (shaping.ts).
 */
export function textCraftRlWorlds(
  tree: CraftingTree,
  depths: readonly number[],
  o: RlWorldsOptions,
  shaping?: RewardShaping,
): RlWorlds {
  const names = rlWorldNames(tree, o.exclude);
  const world = (k: number) => rlWorld(names, { seed: o.seed, depths, k });
  const shape = shaping && shapingOn(shaping) ? { shaping, members: tagMembers(tree) } : undefined;
  return {
    first: RL_WORLDS_FIRST,
    serve: () => serveTextCraft({ port: 0, games: () => worldsOrTasks(tree, world, shape) }),
  };
}

/**
 * One environment of the combined server: a reset below RL_WORLDS_FIRST plays TextCraft's task as the plain
 * server does, one at or past it plays the world. (The server's create resets to the environment's random id
 * first, which may land either side; the trainer's reset follows.)
 */
function worldsOrTasks(
  tree: CraftingTree,
  world: (k: number) => World,
  shape?: { shaping: RewardShaping; members: (name: string) => readonly string[] | undefined },
): ServedGame {
  let game: ServedGame | undefined;
  return {
    reset(index: bigint) {
      if (index < BigInt(RL_WORLDS_FIRST)) {
        const real = new TextCraftGame(tree);
        game = shape ? shapedGame(real, shape.shaping, shape.members) : real;
        return game.reset(index);
      }
      const synthetic = new WorldGame(world(Number(BigInt.asUintN(32, index - BigInt(RL_WORLDS_FIRST)))));
      // Worlds have no tags: their names are items of the game, never a tag's.
      const plain: ServedGame = { reset: () => synthetic.reset(), step: (action) => synthetic.step(action) };
      game = shape ? shapedGame(plain, shape.shaping) : plain;
      return game.reset(index);
    },
    step(action: string) {
      if (!game) throw new RangeError("Reset a TextCraft environment before stepping it");
      return game.step(action);
    },
  };
}
