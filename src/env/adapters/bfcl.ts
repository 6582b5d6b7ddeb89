/**
 * BFCL multi-turn (Crucible's server, tasks/bfcl/server.ts): TextCraft's protocol — `id` field, `/create`
 * answers the first observation, `/reset {id, data_idx}`, `/close` answers a boolean. `/reset` also answers an `info`
 * object about the entry it loaded (its id, category and involved classes), kept for the results' labels, and
 * `GET /tasks` how many entries the server holds, their splits and every entry's labels. `/step`'s `info` (executed
 * calls, turn verdicts, and at the end `passed`) is kept: the task reads a pass there, whatever the reward mode.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";
import { textcraftAdapter } from "./textcraft.ts";

const Reset = z.object({
  id: z.number().int(),
  observation: z.string(),
  info: z.record(z.string(), z.unknown()).optional(),
});
const Step = z.object({
  observation: z.string(),
  reward: z.number(),
  done: z.boolean(),
  // Lenient: a server's null or odd info is dropped, as before info was read.
  info: z.unknown().optional(),
});
const Tasks = z.object({
  count: z.number().int().positive(),
  splits: z.record(z.string(), z.array(z.number().int().nonnegative())).optional(),
  about: z.string().optional(),
  labels: z.array(z.record(z.string(), z.unknown())).optional(),
}).refine((t) => t.labels === undefined || t.labels.length === t.count, {
  message: "labels must hold one object per task (count of them)",
  path: ["labels"],
});

/** The BFCL protocol. */
export const bfclAdapter: Adapter = {
  ...textcraftAdapter,
  name: "bfcl",
  async reset(call, id, index) {
    const r = await call("POST", "/reset", Reset, { body: { id, data_idx: index } });
    return { observation: r.observation, ...(r.info ? { info: r.info } : {}) };
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { id, action } });
    const info = r.info !== null && typeof r.info === "object" && !Array.isArray(r.info)
      ? r.info as Record<string, unknown>
      : undefined;
    return { observation: r.observation, reward: r.reward, done: r.done, ...(info ? { info } : {}) };
  },
  tasks: (call) => call("GET", "/tasks", Tasks),
};
