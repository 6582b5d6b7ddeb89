/**
 * ALFWorld: `id` field; reset takes `game` and `world_type` ("Text"); every observation is followed by
 * `\nAVAILABLE ACTIONS: ` and the comma-joined actions, as upstream's client shows them. No close route.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";

const Created = z.object({ id: z.number().int() });
const Reset = z.object({ observation: z.string(), available_actions: z.array(z.string()) });
const Step = Reset.extend({ reward: z.number(), done: z.boolean() });

const withActions = (r: z.infer<typeof Reset>) =>
  `${r.observation}\nAVAILABLE ACTIONS: ${r.available_actions.join(",")}`;

/** The ALFWorld protocol, text world. */
export const alfworldAdapter: Adapter = {
  name: "alfworld",
  create: async (call) => ({ id: (await call("POST", "/create", Created)).id }),
  async reset(call, id, index) {
    return withActions(await call("POST", "/reset", Reset, { body: { id, game: index, world_type: "Text" } }));
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { id, action } });
    return { observation: withActions(r), reward: r.reward, done: r.done };
  },
};
