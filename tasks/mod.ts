/**
 * Every task by name, and so every environment: the one registry of both. Each task names the protocol its servers
 * speak (its adapter, src/env/adapters/); the environments Crucible talks to are the tasks' adapters, by their names.
 * A new environment is its adapter, its task (tasks/<name>.ts or tasks/<name>/mod.ts) and its line below.
 */
import type { Adapter } from "../src/env/adapter.ts";
import { EnvClient } from "../src/env/client.ts";
import type { TransportOptions } from "../src/env/http.ts";
import { alfworld } from "./alfworld.ts";
import { babyai } from "./babyai.ts";
import { bfcl } from "./bfcl/mod.ts";
import { sciworld } from "./sciworld.ts";
import { searchqa } from "./searchqa.ts";
import { sqlgym } from "./sqlgym.ts";
import type { Task } from "../src/task/task.ts";
import { textcraft } from "./textcraft/mod.ts";
import { webarena } from "./webarena.ts";
import { webshop } from "./webshop/mod.ts";

/** The tasks, keyed by name. */
export const TASKS: Readonly<Record<string, Task>> = {
  textcraft,
  babyai,
  sciworld,
  alfworld,
  webshop,
  sqlgym,
  searchqa,
  webarena,
  bfcl,
};

/** The task called `name`; throws RangeError naming the known ones otherwise. */
export function getTask(name: string): Task {
  if (!Object.hasOwn(TASKS, name)) {
    throw new RangeError(`Unknown task "${name}"; expected one of ${Object.keys(TASKS).join(", ")}`);
  }
  return TASKS[name];
}

/** An environment's name: its adapter's (today each task's own name). */
export type EnvName = string;

/** The environments Crucible can talk to: the tasks' adapters, by their names. */
export const ADAPTERS: Readonly<Record<EnvName, Adapter>> = Object.fromEntries(
  Object.values(TASKS).map((t) => [t.adapter.name, t.adapter]),
);

/**
 * Opens a client for environment `name` over `options.urls`. Throws RangeError for an unknown name.
 *
 * @example
 * ```ts
 * const client = envClient("textcraft", { urls: ["http://127.0.0.1:36001"] });
 * ```
 */
export function envClient(name: EnvName, options: TransportOptions): EnvClient {
  if (!Object.hasOwn(ADAPTERS, name)) {
    throw new RangeError(`Unknown environment "${name}"; expected one of ${Object.keys(ADAPTERS).join(", ")}`);
  }
  return new EnvClient(ADAPTERS[name], options);
}

export type { Prompt, Task } from "../src/task/task.ts";
