/**
 * TextCraft: `id` field; `/create` answers the first observation (of task `id`), which the
 * client keeps; `/reset {id, data_idx}`; observe makes no request; `/close` answers a boolean.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Created = z.object({ id: z.number().int(), observation: z.string(), done: z.boolean(), reward: z.number() });
const Reset = z.object({ id: z.number().int(), observation: z.string() });
const Step = z.object({ observation: z.string(), reward: z.number(), done: z.boolean() });

/** The TextCraft protocol (upstream's server and Crucible's own). */
export const textcraftAdapter: Adapter = {
  name: "textcraft",
  async create(call) {
    const r = await call("POST", "/create", Created, { body: { commands: null, goal: null } });
    return { id: r.id, observation: r.observation };
  },
  async reset(call, id, index) {
    return (await call("POST", "/reset", Reset, { body: { id, data_idx: index } })).observation;
  },
  step: (call, id, action) => call("POST", "/step", Step, { body: { id, action } }),
  async close(call, id) {
    await call("POST", "/close", z.boolean(), { body: { id } });
  },
};
