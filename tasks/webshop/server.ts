/**
 * Crucible's WebShop server: AgentGym's WebShop protocol (agentenv-webshop's server.py) over the game server's
 * plumbing (src/env/server: random ids, per-client quota, idle and age reaping, body and header limits and timeouts,
 * a key beyond loopback, no stack traces), on port 36003 by default.
 *
 * | route | request | answer |
 * |---|---|---|
 * | `GET /` | | `"ok"` |
 * | `POST /create` | no body | the new environment's id, a bare int (reset to a goal drawn by weight, as upstream) |
 * | `POST /reset` | `{env_idx, session_id?}` | `[observation, null]`: goal `session_id` (mod the goal count) |
 * | `POST /step` | `{env_idx, action}` | `{state, reward, done, info}`: `info` null but on a purchase (its reward parts) |
 * | `GET /observation?env_idx=` | | the current page's text |
 * | `GET /available_actions?env_idx=` | | `{has_search_bar, clickables}` |
 * | `GET /instruction_text?env_idx=` | | the instruction heading's text |
 * | `POST /close` | `{env_idx}` | `true`, or `false` for an id not live (beyond upstream, which has no close) |
 * | `GET /tasks` | | the goal count, the splits and each goal's labels (beyond upstream) |
 *
 * Not served: upstream's `/list_envs` (it would hand every client the others' ids) and `/state` (the page's HTML,
 * which Crucible never renders). An id no live environment has is a 404 naming it (upstream: a KeyError's 500); a
 * full server or client quota a 429. Requests run one at a time; every environment owns its session, and all share
 * the read-only world (catalogue, goals, search index).
 *
 * @example
 * ```ts
 * const server = await serveWebShop(generatedSource(), { port: 0 }); // data.ts
 * const id = await (await fetch(`${server.url}/create`, { method: "POST" })).json();
 * // POST /reset {env_idx: id, session_id: 3}; POST /step {env_idx: id, action: "search[red shoes]"}
 * await server.shutdown();
 * ```
 */
import type { Caller } from "../../src/env/server/access.ts";
import { EnvTable } from "../../src/env/server/envs.ts";
import { json } from "../../src/env/server/guard.ts";
import {
  type GameHandler,
  type GameServer,
  type GameServerOptions,
  quotaRefusal,
  routeHandler,
  type ServedTasks,
  serveHandler,
  serverLimits,
  unknownIdText,
} from "../../src/env/server/serve.ts";
import type { Field } from "../../src/env/server/validate.ts";
import { WebShopSession } from "./episode.ts";
import { weightedIndex } from "./goals.ts";
import type { WebShopWorld } from "./world.ts";

/** The port Crucible's WebShop server listens on by default (TextCraft 36001, BFCL 36002). */
export const WEBSHOP_PORT = 36003;

const ENV: Record<string, Field> = { env_idx: { type: "int", required: true } };
const MODELS: Record<string, Record<string, Field> | null> = {
  "GET /": {},
  "POST /create": null,
  "POST /reset": { ...ENV, session_id: { type: "int", required: false, default: null } },
  "POST /step": { ...ENV, action: { type: "str", required: true } },
  "GET /observation": ENV,
  "GET /available_actions": ENV,
  "GET /instruction_text": ENV,
  "POST /close": ENV,
  "GET /tasks": {},
};

/** What a WebShop server serves: the world, and what `GET /tasks` says about its goals. */
export interface WebShopSource {
  world: WebShopWorld;
  tasks: ServedTasks;
}

/**
 * What the embedded server pays beside WebShop's own reward, for RL (`task_options.invalid_penalty`). Each step pays
 * the episode's score so far, as AgentGym's servers do: −p·r before a purchase, r the steps so far whose action the
 * page did not offer (it changed nothing: a click on an asin not shown, a malformed action); a purchase scores
 * WebShop's own reward, so a success still scores 1 and what was bought is never repriced. p = 0 pays upstream's 0
 * until the purchase.
 *
 * Worked example (p = 0.1): `search[red shoes]` 0, `click[b00xxxx999]` (not on the page) −0.1, `click[b00shoe001]`
 * −0.1, `click[buy now]` WebShop's reward for the shoe.
 */
export interface WebShopShaping {
  /** p, in [0, 1). */
  invalidPenalty: number;
}

/** The request handler over `source` (exported for in-process tests and embedding). */
export function webShopHandler(
  source: WebShopSource,
  options: GameServerOptions = {},
  shaping: WebShopShaping = { invalidPenalty: 0 },
): GameHandler {
  const { maxEnvs, perClient, idleMs, maxAgeMs } = serverLimits(options);
  const envs = new EnvTable<WebShopSession>({ idleMs, maxAgeMs });
  // Each session's invalid actions since its last reset (WebShopShaping).
  const invalid = new WeakMap<WebShopSession, number>();
  const { world } = source;
  const unknown = (id: bigint) => json({ detail: unknownIdText(id, idleMs) }, 404);
  const draw = () => weightedIndex(world.goals, Math.random());
  const n = BigInt(Math.max(1, world.goals.length));
  const goalIndex = (id: bigint) => Number(((id % n) + n) % n);
  // An environment made with another key is not found, as an id never made (envs.ts).
  const withEnv = (id: unknown, key: string, f: (s: WebShopSession) => unknown) => {
    const s = envs.get(id as bigint, key);
    return s ? f(s) : unknown(id as bigint);
  };
  const routes: Record<string, (input: Record<string, unknown>, caller: Caller) => unknown> = {
    "GET /": () => "ok",
    "POST /create": (_, owner) => {
      const refused = quotaRefusal(envs, owner.client, { maxEnvs, perClient });
      if (refused) return json({ detail: refused }, 429);
      const session = new WebShopSession(world);
      session.reset(draw());
      return envs.add(session, owner);
    },
    "POST /reset": ({ env_idx, session_id }, { key }) =>
      withEnv(env_idx, key, (s) => {
        invalid.delete(s);
        return [s.reset(session_id === null ? draw() : goalIndex(session_id as bigint)), null];
      }),
    "POST /step": ({ env_idx, action }, { key }) =>
      withEnv(env_idx, key, (s) => {
        const r = s.step(action as string);
        const wasted = (invalid.get(s) ?? 0) + (r.invalid ? 1 : 0);
        invalid.set(s, wasted);
        const reward = r.info || shaping.invalidPenalty === 0 ? r.reward : -shaping.invalidPenalty * wasted;
        return { state: r.observation, reward, done: r.done, info: r.info ?? null };
      }),
    "GET /observation": ({ env_idx }, { key }) => withEnv(env_idx, key, (s) => s.observation),
    "GET /available_actions": ({ env_idx }, { key }) => withEnv(env_idx, key, (s) => s.availableActions()),
    "GET /instruction_text": ({ env_idx }, { key }) =>
      withEnv(
        env_idx,
        key,
        (s) => s.instructionText() ?? json({ detail: "The done page has no instruction text." }, 404),
      ),
    "POST /close": ({ env_idx }, { key }) => envs.delete(env_idx as bigint, key),
    "GET /tasks": () => source.tasks,
  };
  return routeHandler({ models: MODELS, answer: (route, input, caller) => routes[route](input, caller) }, {
    ...options,
    tasks: source.tasks,
  });
}

/** Starts a WebShop server over `source` and resolves once it listens. */
export function serveWebShop(
  source: WebShopSource,
  options: GameServerOptions = {},
  shaping?: WebShopShaping,
): Promise<GameServer> {
  return serveHandler((o) => webShopHandler(source, o, shaping), {
    ...options,
    port: options.port ?? WEBSHOP_PORT,
    title: "WebShop",
  });
}
