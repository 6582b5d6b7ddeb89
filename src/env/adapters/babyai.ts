/**
 * BabyAI: `id` field; `/create` answers `{id}` and loads no game until the first reset; the reward the
 * episode sees is the running `score`, as upstream's client reports it. Errors come as 200 `{"error"}`.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Created = z.object({ id: z.number().int() });
const State = z.object({ observation: z.string(), reward: z.number(), score: z.number(), done: z.boolean() });

/** The BabyAI protocol. */
export const babyaiAdapter: Adapter = {
  name: "babyai",
  create: async (call) => ({ id: (await call("POST", "/create", Created)).id }),
  async reset(call, id, index) {
    return (await call("POST", "/reset", State, { body: { id, data_idx: index } })).observation;
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", State, { body: { id, action } });
    return { observation: r.observation, reward: r.score, done: r.done };
  },
  async close(call, id) {
    await call("POST", "/close", z.boolean(), { body: { id } });
  },
};
