/** Every adapter by environment name, and `envClient` to open a client for one. */
import type { Adapter } from "../adapter.ts";
import { EnvClient } from "../client.ts";
import type { TransportOptions } from "../http.ts";
import { alfworldAdapter } from "./alfworld.ts";
import { babyaiAdapter } from "./babyai.ts";
import { bfclAdapter } from "./bfcl.ts";
import { sciworldAdapter } from "./sciworld.ts";
import { searchqaAdapter } from "./searchqa.ts";
import { sqlgymAdapter } from "./sqlgym.ts";
import { textcraftAdapter } from "./textcraft.ts";
import { webarenaAdapter } from "./webarena.ts";
import { webshopAdapter } from "./webshop.ts";

/** The environments Crucible can talk to. */
export const ADAPTERS = {
  textcraft: textcraftAdapter,
  babyai: babyaiAdapter,
  sciworld: sciworldAdapter,
  alfworld: alfworldAdapter,
  webshop: webshopAdapter,
  sqlgym: sqlgymAdapter,
  searchqa: searchqaAdapter,
  webarena: webarenaAdapter,
  bfcl: bfclAdapter,
} as const satisfies Record<string, Adapter>;

/** An environment name. */
export type EnvName = keyof typeof ADAPTERS;

/** Opens a client for environment `name` over `options.urls`. Throws RangeError for an unknown name. */
export function envClient(name: string, options: TransportOptions): EnvClient {
  if (!Object.hasOwn(ADAPTERS, name)) {
    throw new RangeError(`Unknown environment "${name}"; expected one of ${Object.keys(ADAPTERS).join(", ")}`);
  }
  return new EnvClient(ADAPTERS[name as EnvName], options);
}
