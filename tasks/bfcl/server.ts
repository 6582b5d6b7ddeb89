/**
 * BFCL served over AgentGym's protocol with the game server TextCraft's shares (src/env/server: its routes, JSON shapes, id table and request
 * guards): `/create`, `/reset {id, data_idx}`, `/step {id, action}` answering `observation`, `reward`, `done` and an
 * `info` object (the executed calls with their results, at a user turn's end the checker's verdict, and `state`, a
 * digest of the state the step left: state_key.ts). Entries are
 * BFCL's own, in file order, from a data directory, or Crucible's generated tasks (train indices first, then the
 * held-out ones). `/create` and `/reset` also answer `info: {id, category, involved_classes}` of the entry loaded, and
 * `GET /tasks` how many entries there are, their splits and the labels of each, so a client labels its results and
 * groups its prompts by what is served. Every environment owns its instances. A step never throws: whatever goes
 * wrong inside is answered as an observation and the episode goes on.
 *
 * @example
 * ```ts
 * const server = await serveBfcl({ port: 0 });
 * // POST /create -> {id, observation: "Here is a list of functions ..."}; POST /step {id, action: "[ls(a=True)]"}
 * await server.shutdown();
 * ```
 */
import {
  type GameServer,
  type GameServerOptions,
  type ServedGame,
  type ServedTasks,
  serveGames,
} from "../../src/env/server/serve.ts";
import { CLASS_NAMES, newInstance } from "./classes/api.ts";
import { BFCL_CATEGORIES, type BfclEntry, type FunctionDoc, loadBfclDir } from "./entries.ts";
import { BfclEpisode, type EpisodeOptions } from "./episode.ts";
import { generateEntries } from "./generator.ts";
import { GENERATED_DOCS } from "./tool_docs.ts";

/** What the server plays: entries by index and the tool documents of their classes. */
export interface BfclSource {
  entries: readonly BfclEntry[];
  docs: Readonly<Record<string, readonly FunctionDoc[]>>;
  /** Named index ranges (the generated tasks' train and test; BFCL's files: `bfcl`, all of them). */
  splits?: Readonly<Record<string, readonly number[]>>;
  /** What the entries are, for a client to say what it evaluates ("BFCL's files from DIR: 800 entries ..."). */
  about?: string;
}

/** The generated task set: its seed and split sizes. */
export const GENERATED = { seed: 0, train: 400, test: 100 } as const;

/** Which classes and categories the generated set draws (task_options.generated_*); absent or null: all of them. */
export interface GeneratedSet {
  classes?: readonly string[] | null;
  categories?: readonly string[] | null;
}

const generated = new Map<string, BfclSource>();

/**
 * Crucible's generated tasks: GENERATED.train train entries, then GENERATED.test held-out ones, over `set`'s classes
 * and categories (default: BFCL's eight classes, its four categories); built once per set.
 */
export function generatedSource(set: GeneratedSet = {}): BfclSource {
  const classes = set.classes ?? CLASS_NAMES, categories = set.categories ?? undefined;
  const key = JSON.stringify([classes, categories]);
  const cached = generated.get(key);
  if (cached) return cached;
  const options = { seed: GENERATED.seed, classes, categories };
  const train = generateEntries({ ...options, count: GENERATED.train, split: "train" }, newInstance);
  const test = generateEntries({ ...options, count: GENERATED.test, split: "test" }, newInstance);
  const range = (lo: number, n: number) => Array.from({ length: n }, (_, i) => lo + i);
  const source = {
    entries: [...train, ...test],
    docs: GENERATED_DOCS,
    splits: { train: range(0, train.length), test: range(train.length, test.length) },
    about: `Crucible's generated tasks (${set.classes ? `classes ${classes.join(", ")}` : "all eight classes"}; ${
      set.categories ? `categories ${set.categories.join(", ")}` : "all four categories"
    }): ${train.length} train, ${test.length} held-out test`,
  };
  generated.set(key, source);
  return source;
}

/** BFCL's files from `dataDir` (one split, `bfcl`: all of them), or the generated tasks (of `set`) without one. */
export async function bfclSource(dataDir?: string, set: GeneratedSet = {}): Promise<BfclSource> {
  if (!dataDir) return generatedSource(set);
  const data = await loadBfclDir(dataDir);
  const n = data.entries.length;
  const counts = BFCL_CATEGORIES.map((c) => [c, data.entries.filter((e) => e.category === c).length] as const)
    .filter(([, k]) => k > 0).map(([c, k]) => `${c} ${k}`);
  return {
    ...data,
    splits: { bfcl: Array.from({ length: n }, (_, i) => i) },
    about: `BFCL's files from ${dataDir}: ${n} entries (${counts.join(", ")})`,
  };
}

/** What `GET /tasks` answers for `source`: its size, its splits, what it is and every entry's labels. */
export function servedTasks(source: BfclSource): ServedTasks {
  return {
    count: source.entries.length,
    ...(source.splits ? { splits: { ...source.splits } } : {}),
    ...(source.about ? { about: source.about } : {}),
    labels: source.entries.map(entryLabels),
  };
}

/** An entry's labels, as `/reset` answers them in `info` and `GET /tasks` lists them. */
export function entryLabels(entry: BfclEntry): { id: string; category: string; involved_classes: string[] } {
  return { id: entry.id, category: entry.category, involved_classes: [...entry.involvedClasses] };
}

/** A served game over `source`: reset picks entry `index mod size`. */
export function bfclGame(source: BfclSource, options: EpisodeOptions = {}): ServedGame {
  let episode: BfclEpisode | undefined;
  return {
    reset(index: bigint) {
      const n = BigInt(source.entries.length);
      const entry = source.entries[Number(((index % n) + n) % n)];
      episode = new BfclEpisode(entry, source.docs, newInstance, options);
      return { observation: episode.reset(), info: entryLabels(entry) };
    },
    step(action: string) {
      if (!episode) return { observation: "Reset the environment before stepping it.", reward: 0, done: true };
      try {
        // Every step says the state it left (state_key.ts), for the client's anchors.
        const out = episode.step(action);
        return { ...out, info: { ...out.info, state: episode.stateKey() } };
      } catch (e) {
        // A defect of ours, not the model's: answered, logged, and the episode goes on.
        console.error(`bfcl: step of ${episode.entry.id} failed: ${(e as Error).stack ?? e}`);
        return {
          observation: `Error during execution: ${(e as Error).message}`,
          reward: 0,
          done: false,
          info: { internal_error: String((e as Error).message) },
        };
      }
    },
  };
}

/** Server settings: the game server's, the source's data directory and the episode options. */
export interface BfclServerOptions extends Omit<GameServerOptions, "title"> {
  /** BFCL's data directory (laid out as `bfcl_eval/data/`); default: the generated tasks. */
  dataDir?: string;
  /** Entries to serve instead (tests, embedding); overrides dataDir. */
  source?: BfclSource;
  episode?: EpisodeOptions;
}

/** Starts a BFCL server; resolves once it listens. */
export async function serveBfcl(options: BfclServerOptions = {}): Promise<GameServer> {
  const source = options.source ?? await bfclSource(options.dataDir);
  return serveGames(() => bfclGame(source, options.episode), {
    ...options,
    port: options.port ?? 36002,
    title: "BFCL",
    tasks: servedTasks(source),
  });
}
