/**
 * Where a WebShop server's products and goals come from: WebShop's own files in a data directory, laid out as its
 * `data/` folder (items_shuffle_1000.json with items_ins_v2_1000.json, AgentGym's default, else the full
 * items_shuffle.json with items_ins_v2.json; items_human_ins.json for human goals), or Crucible's generated catalogue.
 *
 * Splits: WebShop's own by goal index for its files (`test` 0-499, `eval` 500-1499, `train` from 1500: its
 * baseline_models/env.py), whatever the goals; for the generated catalogue `train` and `test` by product (no goal in
 * both). Crucible ships none of WebShop's files.
 */
import type { ServedTasks } from "../../src/env/server/serve.ts";
import { type Catalog, loadCatalog, type RawAttributes, type RawHumanInstruction, type RawProduct } from "./catalog.ts";
import { GENERATED_SIZES, generateFiles, type GenerateOptions } from "./generated/generate.ts";
import type { GoalKind } from "./goals.ts";
import type { WebShopSource } from "./server.ts";
import { buildWorld, type WebShopWorld } from "./world.ts";

/** Which goals a data directory serves: human when items_human_ins.json is there, else synthetic ("auto"). */
export type GoalChoice = GoalKind | "auto";

/** The generated catalogue's settings (its seed and sizes are fixed, so its goal indices are stable). */
export const GENERATED: Required<GenerateOptions> = { seed: 0, ...GENERATED_SIZES };

const range = (lo: number, hi: number) => Array.from({ length: Math.max(0, hi - lo) }, (_, i) => lo + i);

/** Labels of every goal by index, as `GET /tasks` lists them. */
function labels(world: WebShopWorld): Record<string, string>[] {
  return world.goals.map((g) => ({ asin: g.asin, category: g.category }));
}

let generated: WebShopSource | undefined;

/** The generated catalogue's world and tasks (built once). */
export function generatedSource(): WebShopSource {
  if (generated) return generated;
  const files = generateFiles(GENERATED);
  const world = buildWorld(loadCatalog(files.products, files.attributes), "synthetic");
  const test = world.goals.flatMap((g, i) => files.testAsins.has(g.asin) ? [i] : []);
  const held = new Set(test);
  const train = world.goals.flatMap((_, i) => held.has(i) ? [] : [i]);
  generated = {
    world,
    tasks: {
      count: world.goals.length,
      splits: { train, test },
      about: `Crucible's generated WebShop: ${world.catalog.products.length} products, ${world.goals.length} ` +
        `synthetic goals (${train.length} train, ${test.length} held out, by product)`,
      labels: labels(world),
    },
  };
  return generated;
}

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    throw new Error(`Cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`${path} is not JSON: ${(e as Error).message}`);
  }
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** WebShop's files from `dir` (its `data/` folder): the catalogue and goals AgentGym's server loads. */
export async function dataDirSource(dir: string, goals: GoalChoice = "auto"): Promise<WebShopSource> {
  const small = `${dir}/items_shuffle_1000.json`;
  const [productsPath, attrsPath] = await exists(small)
    ? [small, `${dir}/items_ins_v2_1000.json`]
    : [`${dir}/items_shuffle.json`, `${dir}/items_ins_v2.json`];
  if (!await exists(productsPath)) {
    throw new RangeError(
      `${dir} holds neither items_shuffle_1000.json nor items_shuffle.json: point --data-dir at WebShop's data/ ` +
        "folder (its setup.sh downloads the files there)",
    );
  }
  const humanPath = `${dir}/items_human_ins.json`;
  const kind: GoalKind = goals === "auto" ? (await exists(humanPath) ? "human" : "synthetic") : goals;
  const raw = await readJson(productsPath);
  if (!Array.isArray(raw)) throw new SyntaxError(`${productsPath} must hold a list of products`);
  const attrs = await readJson(attrsPath);
  if (typeof attrs !== "object" || attrs === null || Array.isArray(attrs)) {
    throw new SyntaxError(`${attrsPath} must hold an object keyed by asin`);
  }
  const human = kind === "human" ? await readJson(humanPath) : undefined;
  if (human !== undefined && (typeof human !== "object" || human === null || Array.isArray(human))) {
    throw new SyntaxError(`${humanPath} must hold an object keyed by asin`);
  }
  const catalog: Catalog = loadCatalog(raw as RawProduct[], attrs as Record<string, RawAttributes>, {
    numProducts: productsPath === small ? 1000 : undefined,
    ...(human ? { human: human as Record<string, RawHumanInstruction[]> } : {}),
  });
  const world = buildWorld(catalog, kind);
  const n = world.goals.length;
  const tasks: ServedTasks = {
    count: n,
    splits: { test: range(0, Math.min(500, n)), eval: range(500, Math.min(1500, n)), train: range(1500, n) },
    about: `WebShop's files from ${dir}: ${catalog.products.length} products, ${n} ${kind} goals`,
    labels: labels(world),
  };
  return { world, tasks };
}

const loaded = new Map<string, Promise<WebShopSource>>();

/** The source a data directory names (loaded once per directory and goal choice), or the generated one. */
export function webShopSource(dir?: string | null, goals: GoalChoice = "auto"): Promise<WebShopSource> {
  if (!dir) return Promise.resolve(generatedSource());
  const key = `${goals}\0${dir}`;
  if (!loaded.has(key)) {
    const load = dataDirSource(dir, goals);
    load.catch(() => loaded.delete(key));
    loaded.set(key, load);
  }
  return loaded.get(key)!;
}
