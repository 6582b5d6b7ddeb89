/**
 * SQLGym / BIRD: `env_idx` field; `/create` answers a bare int from a pool of 8 that is then shared
 * round-robin, so more than 8 concurrent sessions on one server interfere (a server limit, not the client's);
 * reset takes `item_id` and answers `[observation, null]`. No close route. Errors are HTTP 500.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Step = z.object({ state: z.string(), reward: z.number(), done: z.boolean() });

/** The SQLGym protocol. */
export const sqlgymAdapter: Adapter = {
  name: "sqlgym",
  create: async (call) => ({ id: await call("POST", "/create", z.number().int()) }),
  async reset(call, id, index) {
    const [observation] = await call("POST", "/reset", z.tuple([z.string(), z.null()]), {
      body: { env_idx: id, item_id: index },
    });
    return observation;
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { env_idx: id, action } });
    return { observation: r.state, reward: r.reward, done: r.done };
  },
  observe: (call, id) => call("GET", "/observation", z.string(), { query: { env_idx: id } }),
};
