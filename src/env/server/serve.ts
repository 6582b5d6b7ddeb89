/**
 * The game server of AgentGym's TextCraft protocol, for any game (TextCraft's own in tasks/textcraft/game/server.ts,
 * BFCL's in tasks/bfcl/server.ts): upstream TextCraft's routes, JSON shapes and messages (docs/textcraft-server.md) over
 * HTTP/1.1 (`listen.ts`). Requests run one at a time on the event loop and every environment owns its state and
 * generator, so concurrent requests on different environments cannot interfere. Beyond upstream, and invisible to a well-behaved
 * client: loopback by default (with a warning when bound wider), random ids never reused across restarts, idle
 * environments reaped, a cap on live environments, each environment usable only with the key that made it, the
 * request rules of `access.ts` (a Host it answers to, same origin, the key) and `guard.ts` (JSON bodies, size and
 * time limits on bodies) and the listener's header and request timeouts. Extra fields that upstream's clients
 * ignore: a game's `info` about the task it loaded in `/create`'s and `/reset`'s answers (BFCL: the entry's category
 * and classes), and `GET /tasks` (how many tasks, which splits, their labels) where the server is given them.
 *
 * @example
 * ```ts
 * const server = await serveGames(() => game, { port: 0, title: "a game" }); // game: a ServedGame
 * const headers = { "content-type": "application/json" };
 * const res = await fetch(`${server.url}/create`, { method: "POST", headers, body: "{}" });
 * console.log(await res.json()); // {id: 5871243096151183, observation: "Crafting commands:\n...", ...}
 * await server.shutdown();
 * ```
 */
import { EnvTable } from "./envs.ts";
import { GameError, type ServedGame, type ServedReset, type ServedStep, type ServedTasks } from "./game.ts";
import { Access, type Caller, servedNames } from "./access.ts";
import { json, readJson, refuseNonJson, text } from "./guard.ts";
import { listen } from "./listen.ts";
import { checkBody, type Checked, checkQuery, type Field } from "./validate.ts";

export type { ServedGame, ServedReset, ServedStep, ServedTasks } from "./game.ts";
export { isLoopback } from "./access.ts";

/** Server settings; all optional. */
export interface GameServerOptions {
  /** Port to listen on; 0 picks a free one (the default; TextCraft's server defaults to upstream's 36001). */
  port?: number;
  /** Interface to bind. Default 127.0.0.1; upstream binds 0.0.0.0. Anything beyond loopback gets a warning. */
  hostname?: string;
  /** Most environments alive at once; `/create` answers an error past it. Default 4096. */
  maxEnvs?: number;
  /**
   * Most environments one client may hold at once (a client is its address, and its key's place in `token` when
   * several keys are given), so that one client cannot starve the rest. Default min(1024, maxEnvs).
   */
  maxEnvsPerClient?: number;
  /** An environment older than this is closed however recently it was used; 0 never. Default 6 hours. */
  maxAgeMs?: number;
  /**
   * Keys, one of which every request must carry as `Authorization: Bearer KEY` (401 otherwise); required when
   * binding beyond loopback. Default none: no key asked.
   */
  token?: string | readonly string[];
  /** Largest request body accepted, in bytes; larger gets a 413. Default 65536. */
  maxBodyBytes?: number;
  /** Time for a request body to arrive once its headers have, in milliseconds; then a 408. Default 10000. */
  bodyTimeoutMs?: number;
  /** Time for a request's line and headers to arrive, in milliseconds; then a 408. Default 10000. */
  headersTimeoutMs?: number;
  /** An environment no request has touched for this long is closed; 0 never closes one. Default 30 minutes. */
  idleMs?: number;
  /**
   * Names a request's Host may carry beyond the loopback names and `hostname` (bound to every interface: the
   * machine's names); `serve --allowed-host`. Any other Host gets a 421.
   */
  allowedHosts?: readonly string[];
  /** The server's own origin, the one `Origin` a request may carry (serveGames sets it). Default: none may. */
  origin?: string | (() => string);
  /** Where the warning about a non-loopback bind goes. Default `console.error`. */
  warn?: (message: string) => void;
  /** The environment's name in `GET /` and the bind warning ("TextCraft", "BFCL"); default "game". */
  title?: string;
  /**
   * The tasks the server holds, answered by `GET /tasks` (a route beyond upstream's, read-only); without it that
   * route is a 404, as on upstream's servers.
   */
  tasks?: ServedTasks;
}

/** A running server. */
export interface GameServer {
  /** Base URL, e.g. `http://127.0.0.1:36001`; also the one origin a browser request may come from. */
  url: string;
  port: number;
  /** The environment's name (options.title: "TextCraft", "BFCL"). */
  title: string;
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
const MODELS: Record<string, Record<string, Field>> = {
  "GET /": {},
  "POST /create": CREATE,
  "POST /reset": RESET,
  "POST /step": STEP,
  "GET /observation": ID,
  "GET /detail": ID,
  "GET /commands": ID,
  "GET /goal": ID,
  "POST /close": ID,
  "GET /tasks": {},
};

/** The request handler of a game server, as `serveGames` runs it. */
export type GameHandler = (req: Request, client?: { address: string }) => Promise<Response>;

/**
 * One protocol's routes, for `routeHandler`: each route's request model (query fields for GET, body fields for POST;
 * `null` for a POST whose body is never read, as AgentGym WebShop's bodyless `/create`), and the answer of a request
 * that passed validation, given who called (its client, for quotas, and its key, which owns what it makes): a value
 * sent as JSON with status 200, or a `Response` sent as it is. `GET /` is always routed; `GET /tasks` is routed only
 * when the server is given tasks.
 */
export interface RouteTable {
  models: Readonly<Record<string, Readonly<Record<string, Field>> | null>>;
  answer(route: string, input: Record<string, unknown>, caller: Caller): unknown;
}

/**
 * Why `/create` must refuse a new environment for `owner` (too many live, in all or for that client), or undefined.
 * Shared by the protocols so every server holds its clients to the same quota.
 */
export function quotaRefusal(
  envs: EnvTable<unknown>,
  owner: string,
  limits: { maxEnvs: number; perClient: number },
): string | undefined {
  if (envs.size >= limits.maxEnvs) {
    return `Too many live environments (${envs.size} of ${limits.maxEnvs}); close some with /close first.`;
  }
  const held = envs.owned(owner);
  if (held >= limits.perClient) {
    return `Too many live environments for this client (${held} of ${limits.perClient} per client); close some ` +
      "with /close first.";
  }
  return undefined;
}

/** The text that names an id no live environment has, and why that may be (`idleMs`: the server's idle limit). */
export function unknownIdText(id: bigint, idleMs: number): string {
  const reaped = idleMs > 0 ? `, unused for ${duration(idleMs)} and reaped,` : "";
  return `The id ${id} is not valid. No live environment has it: it was closed${reaped} or created by an earlier ` +
    `run of a server that has restarted since (ids are random and never reused). Create a new environment.`;
}

/** The settings every protocol's handler reads: the limits of `GameServerOptions` with their defaults filled. */
export function serverLimits(options: GameServerOptions) {
  const maxEnvs = options.maxEnvs ?? 4096;
  return {
    maxEnvs,
    perClient: options.maxEnvsPerClient ?? Math.min(1024, maxEnvs),
    idleMs: options.idleMs ?? 30 * 60_000,
    maxAgeMs: options.maxAgeMs ?? 6 * 3600_000,
  };
}

/**
 * Builds the request handler (exported for in-process tests and for embedding in another server) over `newGame`'s
 * games, one per environment.
 */
export function gameHandler(newGame: () => ServedGame, options: GameServerOptions = {}): GameHandler {
  const { maxEnvs, perClient, idleMs, maxAgeMs } = serverLimits(options);
  const title = options.title ?? "game";
  const envs = new EnvTable<Env>({ idleMs, maxAgeMs });
  // Upstream's message first, so clients that match on it still do; then what may have happened.
  const notValid = (id: bigint) => ({ error: unknownIdText(id, idleMs) });

  const routes: Record<string, (input: Record<string, unknown>, caller: Caller) => unknown> = {
    "GET /": () => `This is environment ${title}.`,
    "POST /create": (_, owner) => {
      const refused = quotaRefusal(envs, owner.client, { maxEnvs, perClient });
      if (refused) return { error: refused };
      const game = newGame();
      const env: Env = { game, info: { observation: "", done: false, reward: 0, deleted: false } };
      const id = envs.add(env, owner);
      // Upstream resets a new environment to the task whose index is its own id (so id mod the task count here);
      // `commands` and `goal` are unused.
      const { observation, info } = resetReply(game.reset(id));
      env.info.observation = observation;
      return { id, observation, done: false, reward: 0, ...(info ? { info } : {}) };
    },
    "POST /reset": ({ id, data_idx }, { key }) => {
      const env = envs.get(id as bigint, key);
      if (!env) return notValid(id as bigint);
      if (data_idx === null) return { error: "unsupported operand type(s) for %: 'NoneType' and 'int'" };
      const { observation, info } = resetReply(env.game.reset(data_idx as bigint));
      env.info = { observation, done: false, reward: 0, deleted: false };
      // `info` (what the game says about the loaded task) is an extra field that upstream's clients ignore.
      return { id, observation, done: false, reward: 0, ...(info ? { info } : {}) };
    },
    "POST /step": ({ id, action }, { key }) => {
      const env = envs.get(id as bigint, key);
      if (!env) return notValid(id as bigint);
      let out: ServedStep;
      try {
        out = env.game.step(action as string);
      } catch (e) {
        if (e instanceof GameError) return { error: e.message };
        throw e;
      }
      const body = { observation: out.observation, reward: out.reward, done: out.done };
      Object.assign(env.info, body);
      return out.info ? { ...body, info: out.info } : body;
    },
    "GET /observation": ({ id }, { key }) => envs.get(id as bigint, key)?.info.observation ?? notValid(id as bigint),
    "GET /detail": ({ id }, { key }) => envs.get(id as bigint, key)?.info ?? notValid(id as bigint),
    "POST /close": ({ id }, { key }) => envs.delete(id as bigint, key),
    "GET /tasks": () => options.tasks,
    // Upstream's wrapper has no get_commands or get_goal, so these routes always fail inside the handler.
    "GET /commands": () => text("Internal Server Error", 500),
    "GET /goal": () => text("Internal Server Error", 500),
  };
  return routeHandler({ models: MODELS, answer: (route, input, caller) => routes[route](input, caller) }, options);
}

/**
 * The request handler of `table`'s protocol with every guard of the game server: a Host it answers to, same-origin
 * requests only, the key when there are keys, JSON bodies within the size and time limits, 404 and 405 as FastAPI answers them, and 422 for
 * a request that does not fit its route's model.
 */
export function routeHandler(table: RouteTable, options: GameServerOptions = {}): GameHandler {
  const limits = { maxBytes: options.maxBodyBytes ?? 65536, timeoutMs: options.bodyTimeoutMs ?? 10_000 };
  const origin = options.origin ?? "";
  // The bind rule is serveHandler's (an embedded handler may sit behind any listener): loopback here.
  const access = new Access({
    hostname: "127.0.0.1",
    keys: typeof options.token === "string" ? [options.token] : options.token,
    title: options.title ?? "game",
    keyFlag: "serve --token",
    keyEnv: "CRUCIBLE_ENV_TOKEN on both sides",
    origin: typeof origin === "string" ? () => origin : origin,
    hosts: servedNames(options.hostname ?? "127.0.0.1", options.allowedHosts),
  });
  const MODELS = table.models;
  const PATHS = new Set(Object.keys(MODELS).concat("GET /").map((r) => r.split(" ")[1]));

  return async (req: Request, client?: { address: string }): Promise<Response> => {
    const who = access.check(req, client?.address ?? "");
    if ("status" in who) return json({ detail: who.message }, who.status, who.headers);
    const url = new URL(req.url);
    const route = `${req.method} ${url.pathname}`;
    // Without tasks to tell, /tasks does not exist, as on upstream's servers.
    if (url.pathname === "/tasks" && !options.tasks) return json({ detail: "Not Found" }, 404);
    if (!(route in MODELS) && route !== "GET /") {
      return PATHS.has(url.pathname) ? json({ detail: "Method Not Allowed" }, 405) : json({ detail: "Not Found" }, 404);
    }
    let checked: Checked = { ok: true, values: {} };
    const model = MODELS[route];
    if (req.method === "GET" && model) checked = checkQuery(url.searchParams, model);
    else if (req.method === "POST" && model) {
      const body = refuseNonJson(req) ?? await readJson(req, limits);
      if (body instanceof Response) return body;
      checked = checkBody(body, model);
    } else await req.body?.cancel();
    if (!checked.ok) return json({ detail: checked.problems }, 422);
    const answer = route in MODELS
      ? table.answer(route, checked.values, who)
      : `This is environment ${options.title ?? "game"}.`;
    return answer instanceof Response ? answer : json(answer, 200);
  };
}

/** Starts a server of `newGame`'s games and resolves once it listens; warns (see `warn`) when bound beyond loopback. */
export function serveGames(newGame: () => ServedGame, options: GameServerOptions = {}): Promise<GameServer> {
  return serveHandler((o) => gameHandler(newGame, o), options);
}

/**
 * Starts a server of the handler `makeHandler` builds from `options` (with the server's own origin filled in) and
 * resolves once it listens; warns (see `warn`) when bound beyond loopback, and refuses to bind beyond it without a key.
 */
export async function serveHandler(
  makeHandler: (options: GameServerOptions) => GameHandler,
  options: GameServerOptions = {},
): Promise<GameServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const headersTimeoutMs = options.headersTimeoutMs ?? 10_000;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 10_000;
  // The origin (and the base of request URLs) needs the port; it is set before any request can be answered.
  let url = "";
  const handler = makeHandler({ ...options, origin: () => url });
  const access = new Access({
    hostname,
    keys: typeof options.token === "string" ? [options.token] : options.token,
    title: options.title ?? "game",
    keyFlag: "--token",
    keyEnv: "CRUCIBLE_ENV_TOKEN",
  });
  const server = await listen(handler, () => url, {
    hostname,
    port: options.port ?? 0,
    headersTimeoutMs,
    requestTimeoutMs: headersTimeoutMs + bodyTimeoutMs + 1000,
    name: options.title ?? "The server",
  });
  url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${server.port}`;
  const warning = access.bindWarning(server.port, "environments");
  if (warning) (options.warn ?? console.error)(warning);
  return { url, port: server.port, title: options.title ?? "game", shutdown: server.shutdown };
}

/** A game's reset answer as an observation and, where the game gives one, its `info`. */
function resetReply(r: string | ServedReset): ServedReset {
  return typeof r === "string" ? { observation: r } : r;
}

function duration(ms: number): string {
  return ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
