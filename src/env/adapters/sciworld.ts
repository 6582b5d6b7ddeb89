/**
 * SciWorld: `id` field; the first observation is `task_description + "\n" + observation`; the reward is
 * the score, 0 to 100 (100 counts as success). Errors come as 200 `{"error"}`.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Created = z.object({ id: z.number().int() });
const Reset = z.object({ task_description: z.string(), observation: z.string() });
const Step = z.object({ observation: z.string(), reward: z.number(), score: z.number(), done: z.boolean() });

/** The SciWorld protocol. */
export const sciworldAdapter: Adapter = {
  name: "sciworld",
  create: async (call) => ({ id: (await call("POST", "/create", Created)).id }),
  async reset(call, id, index) {
    const r = await call("POST", "/reset", Reset, { body: { id, data_idx: index } });
    return `${r.task_description}\n${r.observation}`;
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { id, action } });
    return { observation: r.observation, reward: r.score, done: r.done };
  },
  async close(call, id) {
    await call("POST", "/close", z.boolean(), { body: { id } });
  },
};
