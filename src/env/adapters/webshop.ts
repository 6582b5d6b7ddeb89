/**
 * WebShop: `env_idx` field; `/create` answers a bare int; reset takes `session_id` and answers
 * `[observation, null]`, after which the page is read from `/observation` as upstream's client does. No close
 * route (upstream's client posts one and gets a 404). Errors are HTTP 500.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Step = z.object({ state: z.string(), reward: z.number(), done: z.boolean() });

/** The WebShop protocol. */
export const webshopAdapter: Adapter = {
  name: "webshop",
  create: async (call) => ({ id: await call("POST", "/create", z.number().int()) }),
  async reset(call, id, index) {
    await call("POST", "/reset", z.tuple([z.string(), z.null()]), { body: { env_idx: id, session_id: index } });
    return await call("GET", "/observation", z.string(), { query: { env_idx: id } });
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { env_idx: id, action } });
    return { observation: r.state, reward: r.reward, done: r.done };
  },
  observe: (call, id) => call("GET", "/observation", z.string(), { query: { env_idx: id } }),
};
