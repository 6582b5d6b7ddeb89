/**
 * WebShop: `env_idx` field; `/create` answers a bare int; reset takes `session_id` and answers
 * `[observation, null]`, after which the page is read from `/observation` as upstream's client does. Close posts
 * `/close {env_idx}`: Crucible's server frees the environment; upstream's has no such route and answers 404 (its own
 * client posts it too), which is taken as closed. `/step`'s `info` is kept when it is an object (Crucible's server:
 * the purchase's reward parts). Upstream's errors are HTTP 500.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";
import { EnvError } from "../errors.ts";

const Step = z.object({ state: z.string(), reward: z.number(), done: z.boolean(), info: z.unknown().optional() });

/** The WebShop protocol (upstream's server and Crucible's own). */
export const webshopAdapter: Adapter = {
  name: "webshop",
  create: async (call) => ({ id: await call("POST", "/create", z.number().int()) }),
  async reset(call, id, index) {
    await call("POST", "/reset", z.tuple([z.string(), z.null()]), { body: { env_idx: id, session_id: index } });
    return await call("GET", "/observation", z.string(), { query: { env_idx: id } });
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { env_idx: id, action } });
    const info = r.info !== null && typeof r.info === "object" && !Array.isArray(r.info)
      ? r.info as Record<string, unknown>
      : undefined;
    return { observation: r.state, reward: r.reward, done: r.done, ...(info ? { info } : {}) };
  },
  observe: (call, id) => call("GET", "/observation", z.string(), { query: { env_idx: id } }),
  async close(call, id) {
    try {
      await call("POST", "/close", z.boolean(), { body: { env_idx: id }, retries: 0 });
    } catch (e) {
      if (!(e instanceof EnvError && e.kind === "http" && e.status === 404)) throw e;
    }
  },
};
