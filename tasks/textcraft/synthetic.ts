/**
 * TextCraft's synthetic tasks for pretraining (the Task hook `synthetic`): random crafting worlds (worlds.ts) over
 * the item names of the game, each played by the stack policy (stack.ts), with a curriculum from shallow worlds and
 * short command lists to TextCraft's full depth and ten distractors, and optionally misread turns that the game
 * refuses before the right reply (recovery data); and a server of held-out worlds, drawn from a
 * seed that training never uses, for measuring success on worlds the model has not seen.
 */
import { serveTextCraft } from "./game/server.ts";
import { Rng } from "../../src/util/random.ts";
import type { SyntheticTasks, TextEpisode } from "../../src/task/task.ts";
import type { StackLayout } from "./stack.ts";
import { worldEpisode, WorldGame } from "./worlds.ts";

/** Most turns of a synthetic episode: longer plans are drawn again (TextCraft's test tasks: median 5, p90 18). */
export const SYNTHETIC_MAX_TURNS = 24;

// Depth weights (1-4) at the start of the curriculum and at its end; TextCraft's test split is 31/41/25/3.
const EARLY = [0.55, 0.3, 0.12, 0.03];
const LATE = [0.2, 0.35, 0.3, 0.15];

/** The depth weights at curriculum progress p in [0, 1]. */
export function depthWeights(p: number): number[] {
  const t = Math.min(1, Math.max(0, p));
  return EARLY.map((x, i) => x + (LATE[i] - x) * t);
}

function drawDepth(rng: Rng, weights: readonly number[]): number {
  let r = rng.float() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < weights.length; i++) if ((r -= weights[i]) < 0) return i + 1;
  return weights.length;
}

/**
 * Held-out world i of `seed` and its demonstration (never with misreads): depth 1 + i mod 4, the full ten
 * distractors.
 */
export function heldOutWorld(names: readonly string[], seed: number, i: number, layout: StackLayout = {}) {
  const rng = new Rng(Math.imul(seed, 7919) + i);
  return worldEpisode(rng, names, { depth: 1 + (i % 4), maxTurns: SYNTHETIC_MAX_TURNS, ...layout });
}

/** How the synthetic episodes are written: the stack policy's frames, and the chance of a misread per turn. */
export interface SyntheticOptions extends StackLayout {
  misreads?: number;
}

/** TextCraft's synthetic tasks over `names` (the game's item names, tags excluded). */
export function textCraftSynthetic(names: readonly string[], o: SyntheticOptions = {}): SyntheticTasks {
  const { misreads } = o, layout: StackLayout = { frames: o.frames, craftCount: o.craftCount };
  return {
    names,
    episode(rng: Rng, progress: number): TextEpisode {
      const depth = drawDepth(rng, depthWeights(progress));
      const maxDistractors = Math.min(10, 2 + Math.floor(progress * 10));
      return worldEpisode(rng, names, { depth, maxTurns: SYNTHETIC_MAX_TURNS, maxDistractors, ...layout, misreads })
        .episode;
    },
    heldOut: (seed, index) => heldOutWorld(names, seed, index, layout).episode,
    serve(seed: number) {
      return serveTextCraft({
        port: 0,
        games: () => {
          let game: WorldGame | undefined;
          return {
            reset(index: bigint) {
              game = new WorldGame(heldOutWorld(names, seed, Number(BigInt.asUintN(32, index)), layout).world);
              return game.reset();
            },
            step(action: string) {
              if (!game) throw new RangeError("Reset a synthetic world before stepping it");
              return game.step(action);
            },
          };
        },
      });
    },
    category: (index) => `depth ${1 + (index % 4)}`,
    refused: (observation) => /^(Could not|Wrong item format)/.test(observation),
  };
}
