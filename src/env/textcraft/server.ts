/**
 * Crucible's TextCraft server: upstream's routes, JSON shapes and messages (spec section 1.3) over `Deno.serve`.
 * Requests run one at a time on the event loop and every environment owns its state and generator, so concurrent
 * requests on different environments cannot interfere. Beyond upstream: loopback by default, a cap on live
 * environments, and a body-size limit.
 *
 * @example
 * ```ts
 * const server = await serveTextCraft({ port: 0 });
 * const res = await fetch(`${server.url}/create`, { method: "POST", body: "{}" });
 * console.log(await res.json()); // {id: 0, observation: "Crafting commands:\n...", done: false, reward: 0}
 * await server.shutdown();
 * ```
 */
import { TextCraftGame, type TextCraftStep } from "./game.ts";
import { PythonError } from "./python.ts";
import { CraftingTree } from "./tree.ts";
import { checkBody, type Checked, checkQuery, type Field, parseJson, toJson } from "./validate.ts";

/** Server settings; all optional. */
export interface TextCraftServerOptions {
  /** Port to listen on; 0 picks a free one. Default 36001, the port of upstream's README. */
  port?: number;
  /** Interface to bind. Default 127.0.0.1; upstream binds 0.0.0.0. */
  hostname?: string;
  /** Most environments alive at once; `/create` answers an error past it. Default 4096. */
  maxEnvs?: number;
  /** Largest request body accepted, in bytes; larger gets a 413. Default 65536. */
  maxBodyBytes?: number;
  /** A loaded tree to share (tests load it once). */
  tree?: CraftingTree;
  /** Games to serve instead of TextCraft's own over the tree (e.g. synthetic worlds, one per task index). */
  games?: () => ServedGame;
}

/** What the server plays: a game that resets to a task index and steps actions, with TextCraft's messages. */
export interface ServedGame {
  reset(index: bigint): string;
  step(action: string): TextCraftStep;
}

/** A running server. */
export interface TextCraftServer {
  /** Base URL, e.g. `http://127.0.0.1:36001`. */
  url: string;
  port: number;
  /** Stops listening and waits for open requests to finish. */
  shutdown(): Promise<void>;
}

interface Env {
  game: ServedGame;
  info: { observation: string; done: boolean; reward: number; deleted: false };
}

const ID: Record<string, Field> = { id: { type: "int", required: true } };
const CREATE: Record<string, Field> = {
  commands: { type: "str", required: false, default: null },
  goal: { type: "str", required: false, default: null },
};
const RESET: Record<string, Field> = { ...ID, data_idx: { type: "int", required: false, default: 0n } };
const STEP: Record<string, Field> = { ...ID, action: { type: "str", required: true } };

/**
 * Builds the request handler (exported for in-process tests and for embedding in another server) over TextCraft's
 * games on `tree`, or over `newGame`'s games.
 */
export function textCraftHandler(
  source: CraftingTree | (() => ServedGame),
  options: TextCraftServerOptions = {},
): (req: Request) => Promise<Response> {
  const newGame = typeof source === "function" ? source : () => new TextCraftGame(source);
  const maxEnvs = options.maxEnvs ?? 4096;
  const maxBody = options.maxBodyBytes ?? 65536;
  const envs = new Map<bigint, Env>();
  let nextId = 0n;
  const notValid = (id: bigint) => ({ error: `The id ${id} is not valid.` });

  const routes: Record<string, (input: Record<string, unknown>) => unknown> = {
    "GET /": () => "This is environment TextCraft.",
    "POST /create": () => {
      if (envs.size >= maxEnvs) {
        return { error: `Too many live environments (${envs.size} of ${maxEnvs}); close some with /close first.` };
      }
      const id = nextId++;
      const game = newGame();
      // Upstream resets a new environment to the task whose index is its own id; `commands` and `goal` are unused.
      const observation = game.reset(id);
      envs.set(id, { game, info: { observation, done: false, reward: 0, deleted: false } });
      return { id, observation, done: false, reward: 0 };
    },
    "POST /reset": ({ id, data_idx }) => {
      const env = envs.get(id as bigint);
      if (!env) return notValid(id as bigint);
      if (data_idx === null) return { error: "unsupported operand type(s) for %: 'NoneType' and 'int'" };
      const observation = env.game.reset(data_idx as bigint);
      env.info = { observation, done: false, reward: 0, deleted: false };
      return { id, observation, done: false, reward: 0 };
    },
    "POST /step": ({ id, action }) => {
      const env = envs.get(id as bigint);
      if (!env) return notValid(id as bigint);
      let out: TextCraftStep;
      try {
        out = env.game.step(action as string);
      } catch (e) {
        if (e instanceof PythonError) return { error: e.message };
        throw e;
      }
      Object.assign(env.info, out);
      return { observation: out.observation, reward: out.reward, done: out.done };
    },
    "GET /observation": ({ id }) => envs.get(id as bigint)?.info.observation ?? notValid(id as bigint),
    "GET /detail": ({ id }) => envs.get(id as bigint)?.info ?? notValid(id as bigint),
    "POST /close": ({ id }) => envs.delete(id as bigint),
  };
  const models: Record<string, Record<string, Field>> = {
    "POST /create": CREATE,
    "POST /reset": RESET,
    "POST /step": STEP,
    "GET /observation": ID,
    "GET /detail": ID,
    "GET /commands": ID,
    "GET /goal": ID,
    "POST /close": ID,
  };
  const paths = new Set(Object.keys(models).concat("GET /").map((r) => r.split(" ")[1]));

  return async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const route = `${req.method} ${url.pathname}`;
    if (!(route in models) && route !== "GET /") {
      return paths.has(url.pathname) ? json({ detail: "Method Not Allowed" }, 405) : json({ detail: "Not Found" }, 404);
    }
    let checked: Checked = { ok: true, values: {} };
    if (req.method === "GET" && route in models) checked = checkQuery(url.searchParams, models[route]);
    else if (req.method === "POST") {
      const body = await readBody(req, maxBody);
      if (body instanceof Response) return body;
      checked = checkBody(body, models[route]);
    }
    if (!checked.ok) return json({ detail: checked.problems }, 422);
    // Upstream's wrapper has no get_commands or get_goal, so these routes always fail inside the handler.
    if (route === "GET /commands" || route === "GET /goal") return text("Internal Server Error", 500);
    return json(routes[route](checked.values), 200);
  };
}

// Reads a JSON body, refusing more than `limit` bytes; undefined when the body is empty.
async function readBody(req: Request, limit: number): Promise<unknown | Response> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  const tooLarge = () => json({ detail: `Request body is larger than the limit of ${limit} bytes.` }, 413);
  if (declared > limit) return tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body ?? []) {
    size += chunk.length;
    if (size > limit) return tooLarge();
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) bytes.set(c, (at += c.length) - c.length);
  try {
    return parseJson(new TextDecoder().decode(bytes));
  } catch (e) {
    const problem = {
      type: "json_invalid",
      loc: ["body", 0],
      msg: "JSON decode error",
      input: {},
      ctx: { error: String(e) },
    };
    return json({ detail: [problem] }, 422);
  }
}

function json(value: unknown, status: number): Response {
  return new Response(toJson(value), { status, headers: { "content-type": "application/json" } });
}

function text(body: string, status: number): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** Starts a TextCraft server and resolves once it listens. */
export async function serveTextCraft(options: TextCraftServerOptions = {}): Promise<TextCraftServer> {
  const source = options.games ?? options.tree ?? await CraftingTree.load();
  const hostname = options.hostname ?? "127.0.0.1";
  const { promise: listening, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve(
    { port: options.port ?? 36001, hostname, onListen: ({ port }) => resolve(port) },
    textCraftHandler(source, options),
  );
  const port = await listening;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return { url: `http://${host}:${port}`, port, shutdown: () => server.shutdown() };
}
