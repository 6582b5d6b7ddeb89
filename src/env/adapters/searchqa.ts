/**
 * SearchQA: `env_idx` field; `/create` needs an item id to preload (0 here; reset picks the real one)
 * and answers a bare int; reset takes `id` and answers the prompt as a bare string; the server itself finds the
 * `<search>` or `<answer>` in the raw text. Errors are HTTP 500.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Step = z.object({ observation: z.string(), reward: z.number(), done: z.boolean() });

/** The SearchQA protocol. */
export const searchqaAdapter: Adapter = {
  name: "searchqa",
  create: async (call) => ({ id: await call("POST", "/create", z.number().int(), { body: { id: 0 } }) }),
  reset: (call, id, index) => call("POST", "/reset", z.string(), { body: { env_idx: id, id: index } }),
  step: (call, id, action) => call("POST", "/step", Step, { body: { env_idx: id, action } }),
  observe: (call, id) => call("GET", "/observation", z.string(), { query: { env_idx: id } }),
  async close(call, id) {
    await call("POST", "/close", z.boolean(), { body: { env_idx: id } });
  },
};
