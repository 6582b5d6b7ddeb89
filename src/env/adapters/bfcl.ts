/**
 * BFCL multi-turn (Crucible's server, tasks/bfcl/server.ts): TextCraft's protocol — `id` field, `/create`
 * answers the first observation, `/reset {id, data_idx}`, `/close` answers a boolean. `/step` also answers an `info`
 * object (executed calls, turn verdicts) that the episode loop does not need and the schema lets through unread.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";
import { textcraftAdapter } from "./textcraft.ts";

const Step = z.object({ observation: z.string(), reward: z.number(), done: z.boolean() });

/** The BFCL protocol. */
export const bfclAdapter: Adapter = {
  ...textcraftAdapter,
  name: "bfcl",
  step: (call, id, action) => call("POST", "/step", Step, { body: { id, action } }),
};
