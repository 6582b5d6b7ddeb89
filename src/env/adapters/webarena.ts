/**
 * WebArena: `env_idx` field; reset takes `idx` and `seed` (0, as upstream's client sends); a reset whose
 * observation is `TimeoutError` failed and is reported as an environment failure; `done` is `terminated`, and the
 * reward counts only then; `/close` answers `{"closed": "closed"}` or the error's text.
 */
import { z } from "zod";
import type { Adapter } from "../adapter.ts";
import { EnvError } from "../errors.ts";

const Created = z.object({ env_idx: z.number().int() });
const Reset = z.object({ observation: z.string() });
const Step = z.object({ observation: z.string(), reward: z.number(), terminated: z.boolean() });

/** The WebArena protocol. */
export const webarenaAdapter: Adapter = {
  name: "webarena",
  create: async (call) => ({ id: (await call("POST", "/create", Created)).env_idx }),
  async reset(call, id, index) {
    const r = await call("POST", "/reset", Reset, { body: { env_idx: id, seed: 0, idx: index } });
    if (r.observation === "TimeoutError") {
      throw new EnvError("the server's browser timed out during reset", {
        kind: "error_body",
        route: "POST /reset",
        url: "",
        status: 200,
        body: JSON.stringify(r),
      });
    }
    return r.observation;
  },
  async step(call, id, action) {
    const r = await call("POST", "/step", Step, { body: { env_idx: id, action } });
    return { observation: r.observation, reward: r.terminated ? r.reward : 0, done: r.terminated };
  },
  observe: (call, id) => call("GET", "/observation", z.string(), { query: { env_idx: id } }),
  async close(call, id) {
    const r = await call("POST", "/close", z.object({ closed: z.string() }), { body: { env_idx: id } });
    if (r.closed !== "closed") {
      throw new EnvError(`close failed: ${r.closed}`, {
        kind: "error_body",
        route: "POST /close",
        url: "",
        status: 200,
        body: JSON.stringify(r),
      });
    }
  },
};
