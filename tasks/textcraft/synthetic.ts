/**
 * TextCraft's synthetic tasks for pretraining (the Task hook `synthetic`): random crafting worlds (worlds.ts) over
 * the item names of the game, each played by the stack policy (stack.ts), with a curriculum from shallow worlds and
 * short command lists to TextCraft's full depth and ten distractors, and optionally misread turns that the game
 * refuses before the right reply (recovery data); look-up drills (a world's opening, then frames `X using` whose
 * inputs only X's command line gives); and a server of held-out worlds, drawn from a seed that training never uses,
 * for measuring success on worlds the model has not seen.
 */
import { serveTextCraft } from "./game/server.ts";
import { Rng } from "../../src/util/random.ts";
import type { DrillPiece, SyntheticTasks, TextEpisode } from "../../src/task/task.ts";
import type { StackLayout } from "./stack.ts";
import { randomWorld, type World, worldEpisode, WorldGame, worldOpening } from "./worlds.ts";
import { COUNT_PHRASES } from "./vocabulary.ts";
import { refusedObservation } from "./shaping.ts";

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

/** A world's depth and most distractors at curriculum progress p: shallow and short lists first. */
function curriculum(rng: Rng, p: number): { depth: number; maxDistractors: number } {
  return { depth: drawDepth(rng, depthWeights(p)), maxDistractors: Math.min(10, 2 + Math.floor(p * 10)) };
}

/**
 * Held-out world i of `seed` and its demonstration (never with misreads): depth 1 + i mod 4, the full ten
 * distractors.
 */
export function heldOutWorld(names: readonly string[], seed: number, i: number, layout: StackLayout = {}) {
  const rng = new Rng(Math.imul(seed, 7919) + i);
  return worldEpisode(rng, names, { depth: 1 + (i % 4), maxTurns: SYNTHETIC_MAX_TURNS, ...layout });
}

/** Most frames asked in one look-up drill. */
export const DRILL_MAX_ASKS = 6;

/**
 * A look-up drill on `world`: its opening, then `Thought:` and 2 to DRILL_MAX_ASKS frames (fewer where the list has
 * fewer lines) of lines drawn without repeats (items with one recipe in the list, those that are other lines' inputs
 * first), each its item then ` using` (given) and the line's inputs as the list writes them (trained), frames joined
 * by ` |` as the stack policy's tail frames are. The item also stands among other lines' inputs, and every line has
 * ` using`, so neither the item alone nor the token before the answer finds it: only the place where the list's
 * line has that item before ` using`. The asks follow no plan, so a guess from the previous frame does not find it
 * either.
 */
export function lookupDrill(rng: Rng, world: World): DrillPiece[] {
  // An item with two recipes in the list has no one answer, so it is never asked. Items that other lines take as an
  // input come first, as every frame a reply pushes is one: there the item alone points at two places.
  const count = (out: string) => world.lines.filter((l) => l.output === out).length;
  const input = (out: string) => world.lines.some((l) => l.inputs.some((x) => x.name === out));
  const once = world.lines.flatMap((l, i) => count(l.output) === 1 ? [i] : []);
  const order = [
    ...rng.shuffle(once.filter((i) => input(world.lines[i].output))),
    ...rng.shuffle(once.filter((i) => !input(world.lines[i].output))),
  ];
  const asks = rng.shuffle(order.slice(0, Math.min(order.length, 2 + rng.int(DRILL_MAX_ASKS - 1))));
  const pieces: DrillPiece[] = [{ text: `${worldOpening(world)}\n\nThought:`, trained: false }];
  asks.forEach((at, k) => {
    const line = world.lines[at];
    // The answer starts at ` using`: a vocabulary with count phrases (vocabulary.ts) writes ` using 9` as one token.
    pieces.push({ text: `${k > 0 ? " |" : ""} ${line.output}`, trained: false });
    pieces.push({ text: ` using ${line.inputs.map((x) => `${x.count} ${x.name}`).join(", ")}`, trained: true });
  });
  return pieces;
}

/** How the synthetic episodes are written: the stack policy's frames, and the chance of a misread per turn. */
export interface SyntheticOptions extends StackLayout {
  misreads?: number;
  /** Chance of a skipped push before each turn that pushes a frame (worlds.ts, EpisodeOptions.skippedPushes). */
  skippedPushes?: number;
}

/** TextCraft's synthetic tasks over `names` (the game's item names, tags excluded). */
export function textCraftSynthetic(names: readonly string[], o: SyntheticOptions = {}): SyntheticTasks {
  const { misreads, skippedPushes } = o, layout: StackLayout = { frames: o.frames, craftCount: o.craftCount };
  return {
    names,
    // As they stand in a command line: ` using 9` after a name and a space, `, 1` right after a name.
    links: COUNT_PHRASES.map((p) => (p.startsWith(",") ? p : ` ${p}`)),
    episode(rng: Rng, progress: number): TextEpisode {
      return worldEpisode(rng, names, {
        ...curriculum(rng, progress),
        maxTurns: SYNTHETIC_MAX_TURNS,
        ...layout,
        misreads,
        skippedPushes,
      })
        .episode;
    },
    heldOut: (seed, index) => heldOutWorld(names, seed, index, layout).episode,
    drill(rng: Rng, progress: number): DrillPiece[] {
      for (;;) {
        const pieces = lookupDrill(rng, randomWorld(rng, names, curriculum(rng, progress)));
        if (pieces.length > 1) return pieces; // a world whose every item has two recipes asks nothing: drawn again
      }
    },
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
    refused: refusedObservation,
  };
}
