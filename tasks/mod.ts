/** Every task by name. */
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

/** The tasks, keyed by name (the same names as the adapters). */
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

export type { Prompt, Task } from "../src/task/task.ts";
