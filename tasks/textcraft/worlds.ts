/**
 * Synthetic crafting worlds for pretraining: random recipe graphs written in TextCraft's surface form, and a game
 * with TextCraft's rules and messages to play them. Nothing here reads the game's recipe tables: the only input is
 * a list of names (the tokenizer's item vocabulary), drawn at random for every world, so that no name carries a
 * recipe and every name learns to be just a name.
 *
 * A world is a goal of a chosen depth (1: every input is fetched; d: the longest chain of crafts is d), its
 * recipe tree with one to four inputs per recipe, yields and counts in TextCraft's ranges, items shared between
 * branches, alternative recipes for some items, and distractor lines that use the same inputs, shuffled into one
 * command list as TextCraft builds it.
 */
import { nameToId, pyRepr } from "./game/python.ts";
import type { Rng } from "../../src/util/random.ts";
import {
  type CommandLine,
  type CraftCount,
  type Ingredient,
  ingredientsText,
  parseOpening,
  type StackFrames,
  stackPlan,
  type StackTurn,
} from "./stack.ts";

/** A generated world: its command list in order and its goal. */
export interface World {
  /** The command list, in order. */
  lines: CommandLine[];
  /** The item to craft. */
  goal: string;
  /** The goal's depth. */
  depth: number;
}

/** How worlds are drawn. */
export interface WorldOptions {
  /** Depth of the goal, 1 to 4. */
  depth: number;
  /** Most distractor lines (uniform from 0); TextCraft draws up to 10. */
  maxDistractors?: number;
  /** Chance that a crafted item has a second recipe in the list. */
  alternatives?: number;
  /** Chance that an input reuses an item already in the world. */
  sharing?: number;
}

// Weights of the numbers that TextCraft's recipes show: yields, input counts, inputs per recipe.
const YIELDS: readonly [number, number][] = [[1, 45], [2, 8], [3, 8], [4, 20], [6, 7], [8, 8], [16, 2], [9, 2]];
const COUNTS: readonly [number, number][] = [
  [1, 40],
  [2, 16],
  [3, 10],
  [4, 10],
  [5, 3],
  [6, 9],
  [7, 2],
  [8, 7],
  [9, 3],
];
const WIDTHS: readonly [number, number][] = [[1, 40], [2, 32], [3, 18], [4, 10]];

function pick(rng: Rng, table: readonly [number, number][]): number {
  const total = table.reduce((s, [, w]) => s + w, 0);
  let r = rng.float() * total;
  for (const [v, w] of table) if ((r -= w) < 0) return v;
  return table[table.length - 1][0];
}

function lineOf(output: string, count: number, inputs: Ingredient[]): CommandLine {
  const text = `craft ${count} ${output} using ${inputs.map((x) => `${x.count} ${x.name}`).join(", ")}`;
  return { output, count, inputs, text };
}

/**
 * A random world over `names` (at least 40 distinct ones). Deterministic in the generator's state.
 *
 * @example
 * ```ts
 * const w = randomWorld(new Rng(7), ["oak planks", "stick", ...], { depth: 2 });
 * console.log(worldOpening(w)); // "Crafting commands:\ncraft 4 stick using 2 oak planks\n...\n\nGoal: craft stick."
 * ```
 */
export function randomWorld(rng: Rng, names: readonly string[], o: WorldOptions): World {
  if (!Number.isInteger(o.depth) || o.depth < 1 || o.depth > 4) {
    throw new RangeError(`A world's depth is 1 to 4, got ${o.depth}`);
  }
  if (names.length < 40) throw new RangeError(`Worlds need at least 40 names to draw from, got ${names.length}`);
  const used = new Set<string>();
  const fresh = () => {
    for (;;) {
      const n = names[rng.int(names.length)];
      if (!used.has(n)) return used.add(n), n;
    }
  };
  const sharing = o.sharing ?? 0.15;
  const bases: string[] = [];
  // Crafted items by depth, once their recipes are complete (so reusing one can never close a loop).
  const made: { name: string; depth: number }[] = [];
  const needed: CommandLine[] = [];
  const input = (maxDepth: number, mustDepth: number): Ingredient => {
    const count = pick(rng, COUNTS);
    if (mustDepth > 0) return { name: make(mustDepth), count };
    const reuse = made.filter((m) => m.depth <= maxDepth);
    if (rng.float() < sharing && reuse.length > 0) return { name: reuse[rng.int(reuse.length)].name, count };
    if (maxDepth > 0 && rng.float() < 0.35) return { name: make(1 + rng.int(maxDepth)), count };
    if (rng.float() < sharing && bases.length > 0) return { name: bases[rng.int(bases.length)], count };
    const b = fresh();
    bases.push(b);
    return { name: b, count };
  };
  const inputsFor = (depth: number): Ingredient[] => {
    const width = pick(rng, WIDTHS);
    const deep = rng.int(width);
    const out: Ingredient[] = [];
    for (let i = 0; i < width; i++) {
      const x = input(depth - 1, i === deep ? depth - 1 : 0);
      // One input per item in a recipe, as TextCraft's lines have.
      if (!out.some((y) => y.name === x.name)) out.push(x);
    }
    return out;
  };
  function make(depth: number): string {
    const name = fresh();
    needed.push(lineOf(name, pick(rng, YIELDS), inputsFor(depth)));
    if (rng.float() < (o.alternatives ?? 0.12)) needed.push(lineOf(name, pick(rng, YIELDS), inputsFor(depth)));
    made.push({ name, depth });
    return name;
  }
  const goal = make(o.depth);
  // Distractors: recipes of new items that use the world's inputs, as TextCraft draws them from shared inputs.
  const inputs = [...new Set(needed.flatMap((l) => l.inputs.map((x) => x.name)))];
  const distractors: CommandLine[] = [];
  const count = rng.int((o.maxDistractors ?? 10) + 1);
  for (let i = 0; i < count; i++) {
    const width = pick(rng, WIDTHS);
    const ins: Ingredient[] = [{ name: inputs[rng.int(inputs.length)], count: pick(rng, COUNTS) }];
    while (ins.length < width) {
      const name = rng.float() < 0.5 ? inputs[rng.int(inputs.length)] : fresh();
      if (!ins.some((x) => x.name === name)) ins.push({ name, count: pick(rng, COUNTS) });
      else break;
    }
    distractors.push(lineOf(fresh(), pick(rng, YIELDS), ins));
  }
  return { lines: rng.shuffle([...needed, ...distractors]), goal, depth: o.depth };
}

/** The first observation of a world, as TextCraft writes one. */
export function worldOpening(w: World): string {
  return `Crafting commands:\n${w.lines.map((l) => l.text).join("\n")}\n\nGoal: craft ${w.goal}.`;
}

/** What a step returns, as TextCraft's. */
export interface WorldStep {
  /** What the game says after the action. */
  observation: string;
  /** 1 when the goal was crafted. */
  reward: 0 | 1;
  /** Whether the episode has ended. */
  done: boolean;
}

const CRAFT = /^craft ([^\n]*) using ([^\n]*)/;
const GET = /^get ([0-9]+) ([^\n]*)/;
const COUNTED = /^([0-9]+) ([^\n]*)/;

/**
 * A game of one world under TextCraft's rules and messages (tasks/textcraft/game/game.ts): `get` fetches any name the
 * world cannot craft, `craft` needs the exact inputs of one of the item's lines in hand, and crafting the goal ends
 * the episode with reward 1. Names stand for ids as TextCraft's do (`minecraft:oak_planks`).
 */
export class WorldGame {
  readonly #world: World;
  readonly #craftable: Set<string>;
  #inventory = new Map<string, number>();

  /** A game of `world` with an empty inventory. */
  constructor(world: World) {
    this.#world = world;
    this.#craftable = new Set(world.lines.map((l) => l.output));
  }

  /** A game of the same world in the same state, to try an action without touching this one. */
  clone(): WorldGame {
    const copy = new WorldGame(this.#world);
    copy.#inventory = new Map(this.#inventory);
    return copy;
  }

  /** Empties the inventory and returns the opening. */
  reset(): string {
    this.#inventory = new Map();
    return worldOpening(this.#world);
  }

  /** Runs one action. */
  step(action: string): WorldStep {
    const fail = (observation: string): WorldStep => ({ observation, reward: 0, done: false });
    const get = GET.exec(action);
    const craft = CRAFT.exec(action);
    if (craft) {
      const m = COUNTED.exec(craft[1]);
      const output = m ? m[2] : craft[1];
      const given: Ingredient[] = [];
      for (const segment of craft[2].split(",")) {
        const c = COUNTED.exec(segment.trim());
        if (!c) return fail(`Wrong item format: ${segment.trim()}`);
        given.push({ name: c[2], count: Number(c[1]) });
      }
      if (given.some((x) => (this.#inventory.get(x.name) ?? -1) < x.count)) {
        return fail(`Could not find enough items to craft ${nameToId(output)}`);
      }
      const line = this.#world.lines.find((l) => l.output === output && sameInputs(l.inputs, given));
      if (!line) {
        return fail(
          `Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag(tag=None, item_id=${
            pyRepr(nameToId(output))
          }), count=${m ? Number(m[1]) : 1})`,
        );
      }
      for (const x of given) {
        const left = this.#inventory.get(x.name)! - x.count;
        if (left === 0) this.#inventory.delete(x.name);
        else this.#inventory.set(x.name, left);
      }
      this.#inventory.set(output, (this.#inventory.get(output) ?? 0) + line.count);
      const done = output === this.#world.goal;
      return { observation: `Crafted ${line.count} ${nameToId(output)}`, reward: done ? 1 : 0, done };
    }
    if (get) {
      const name = get[2];
      if (this.#craftable.has(name)) return fail(`Could not find ${name}`);
      this.#inventory.set(name, (this.#inventory.get(name) ?? 0) + Number(get[1]));
      return { observation: `Got ${get[1]} ${name}`, reward: 0, done: false };
    }
    if (action.startsWith("inventory")) return fail(this.#inventoryText());
    return fail(`Could not execute ${action}`);
  }

  #inventoryText(): string {
    if (this.#inventory.size === 0) return "Inventory: You are not carrying anything.";
    let text = "Inventory: ";
    for (const [name, count] of this.#inventory) text += `[${name}] (${count}) `;
    return text;
  }
}

function sameInputs(want: readonly Ingredient[], given: readonly Ingredient[]): boolean {
  if (want.length !== given.length) return false;
  const left = [...given];
  for (const x of want) {
    const i = left.findIndex((y) => y.name === x.name && y.count === x.count);
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

/** An episode as text: the opening, then each reply and what the game answered (`misread`: see src/task/task.ts). */
export interface TextEpisode {
  opening: string;
  turns: { reply: string; observation: string; misread?: boolean }[];
  /** Whether the last step crafted the goal. */
  success: boolean;
}

/** How an episode is played: the plan's length bound, its reply layout, and misreads for recovery data. */
export interface EpisodeOptions {
  maxTurns: number;
  /** The stack policy's frame layout (default "count"). */
  frames?: StackFrames;
  /** The count its craft actions write (default "line"). */
  craftCount?: CraftCount;
  /**
   * Chance, before each turn, of a misread first (at most MAX_MISREADS an episode): a reply that quotes a
   * neighbouring line's inputs or an input's count wrong, or fetches an item that must be crafted; the game answers with
   * its failure message and the right reply follows. Only misreads that fail are played, so the plan goes on unchanged.
   */
  misreads?: number;
  /**
   * Chance, before each turn whose reply pushes a frame (its top frame is not on the previous reply), of a misread
   * that skips that push (see {@linkcode skippedPush}), drawn before the other misreads and counted with them; 0
   * (default) draws nothing and keeps the data as it was.
   */
  skippedPushes?: number;
}

/** Most misread turns in one episode. */
export const MAX_MISREADS = 2;

/**
 * A random world whose stack-policy plan (tasks/textcraft/stack.ts) takes at most `maxTurns` turns, and that plan
 * played through the world's game. Worlds with longer plans are drawn again.
 */
export function worldEpisode(
  rng: Rng,
  names: readonly string[],
  o: WorldOptions & EpisodeOptions,
): { world: World; episode: TextEpisode } {
  for (let tries = 0;; tries++) {
    const world = randomWorld(rng, names, o);
    let turns;
    try {
      turns = stackPlan(parseOpening(worldOpening(world)), {
        maxTurns: o.maxTurns,
        frames: o.frames,
        craftCount: o.craftCount,
      });
    } catch (e) {
      if (!(e instanceof RangeError) || tries > 1000) throw e;
      continue;
    }
    const game = new WorldGame(world);
    const episode: TextEpisode = { opening: game.reset(), turns: [], success: false };
    let misreads = 0;
    for (const [i, t] of turns.entries()) {
      // Draws only when misreads or skipped pushes are asked for, so the data without them stays as it was.
      const skip = o.skippedPushes && misreads < MAX_MISREADS && pushesFrame(turns[i - 1]?.reply, t.reply) &&
        rng.float() < o.skippedPushes;
      if (skip || (o.misreads && misreads < MAX_MISREADS && rng.float() < o.misreads)) {
        const wrong = skip ? skippedPush(t.reply, (a) => refusal(game, a)) : misreadTurn(rng, world, t, game);
        if (wrong) episode.turns.push({ ...wrong, misread: true }), misreads++;
      }
      const r = game.step(t.action);
      episode.turns.push({ reply: t.reply, observation: r.observation });
      episode.success = r.done;
    }
    return { world, episode };
  }
}

/** A reply's frames, top last (`Thought: a using 1 b | b using 1 c` -> the two frames). */
export function framesOf(reply: string): string[] {
  const thought = reply.slice("Thought: ".length, reply.lastIndexOf("\nAction: "));
  return thought.split(" | ");
}

/** The item a frame crafts: its text before ` using ` (tail frames) or before the count (count frames). */
function frameItem(frame: string): string {
  const at = frame.indexOf(" using ");
  return at >= 0 ? frame.slice(0, at) : frame.slice(0, frame.indexOf(":")).replace(/ \d+$/, "");
}

/** Whether `reply` pushes a frame: it has two or more, and its top frame's item is not at that depth in `previous`. */
export function pushesFrame(previous: string | undefined, reply: string): boolean {
  const now = framesOf(reply);
  if (now.length < 2) return false;
  const before = previous === undefined ? [] : framesOf(previous);
  const at = now.length - 1;
  return at >= before.length || frameItem(before[at]) !== frameItem(now[at]);
}

/**
 * The base model's commonest reading error, played as a misread: the reply that should push a frame for an input
 * that has a line of its own ends its thought before that frame and fetches the input instead (`... | black wool using
 * 1 black dye, 1 white wool` and `get 1 black dye`, where black dye has a line), which the game refuses with
 * `Could not find black dye` (`refuse` gives the game's answer to the action, which fetches `item`, or undefined where
 * the game would not refuse it). The right reply, with the frame, follows it. Undefined when the parent frame does not
 * name the item with a count or the action is not refused.
 */
export function skippedPush(
  reply: string,
  refuse: (action: string, item: string) => string | undefined,
): { reply: string; observation: string } | undefined {
  const frames = framesOf(reply);
  const item = frameItem(frames[frames.length - 1]);
  const parent = frames[frames.length - 2];
  const using = parent.indexOf(" using ");
  const inputs = using >= 0 ? parent.slice(using + " using ".length) : parent.slice(parent.indexOf(": ") + 2);
  const name = item.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const count = new RegExp(`(?:^|, )(\\d+) ${name}(?:,| x\\d+|$)`).exec(inputs);
  if (!count) return undefined;
  const action = `get ${count[1]} ${item}`;
  const observation = refuse(action, item);
  if (observation === undefined) return undefined;
  return { reply: `Thought: ${frames.slice(0, -1).join(" | ")}\nAction: ${action}`, observation };
}

/** The game's answer to `action` from its current state, without playing it, when it refuses it; else undefined. */
function refusal(game: WorldGame, action: string): string | undefined {
  const r = game.clone().step(action);
  return r.observation.startsWith("Could not") ? r.observation : undefined;
}

/**
 * A wrong version of a planned turn that the game refuses, with its failure message; undefined when the drawn
 * mistake would succeed (then no misread is played). A craft quotes a neighbouring line's inputs, or one input with
 * another count, in its thought's last frame and its action; a get fetches an item the list crafts.
 */
export function misreadTurn(
  rng: Rng,
  world: World,
  turn: StackTurn,
  game: WorldGame,
): { reply: string; observation: string } | undefined {
  const at = turn.reply.lastIndexOf("\nAction: ");
  const thought = turn.reply.slice(0, at);
  const craft = /^craft (\d+) (.+?) using (.+)$/.exec(turn.action);
  let action: string, wrongThought = thought;
  if (craft) {
    // The line crafted; under craft_count "one" the action's yield is not the line's, so its item and inputs say.
    const same = (l: CommandLine) => l.output === craft[2] && ingredientsText(l.inputs) === craft[3];
    let index = world.lines.findIndex((l) => l.text === turn.action);
    if (index < 0) index = world.lines.findIndex(same);
    const near = [index - 1, index + 1].filter((i) => i >= 0 && i < world.lines.length);
    const other = world.lines[near.length > 0 ? near[rng.int(near.length)] : rng.int(world.lines.length)];
    const line = world.lines[index];
    let inputs: string;
    if (rng.float() < 0.5 || !line) inputs = ingredientsText(other.inputs);
    else {
      // One input's count misread (TextCraft matches input counts exactly, never the yield).
      const j = rng.int(line.inputs.length);
      inputs = ingredientsText(line.inputs.map((x, i) => (i === j ? { ...x, count: pick(rng, COUNTS) } : x)));
    }
    const k = thought.lastIndexOf(craft[3]);
    if (inputs === craft[3] || k < 0) return undefined;
    wrongThought = thought.slice(0, k) + inputs + thought.slice(k + craft[3].length);
    action = `craft ${craft[1]} ${craft[2]} using ${inputs}`;
  } else {
    const get = /^get (\d+) (.+)$/.exec(turn.action);
    if (!get) return undefined;
    action = `get ${get[1]} ${world.lines[rng.int(world.lines.length)].output}`;
  }
  const observation = refusal(game, action);
  return observation === undefined ? undefined : { reply: `${wrongThought}\nAction: ${action}`, observation };
}
