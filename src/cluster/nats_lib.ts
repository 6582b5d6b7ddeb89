/**
 * The NATS client packages (npm, Apache-2.0), loaded on first use by specifiers held in variables, so that only a
 * command that joins or makes a cluster fetches them: a first `--help` and a run on one machine never do
 * (docs/first-run.md). Their types come in as type-only imports, which Deno neither downloads nor loads to run the
 * program; the cluster's modules take the types from here, so the pinned versions live in this file alone.
 */
export type { NatsConnection, NodeConnectionOptions } from "npm:@nats-io/transport-node@3.4.0";
export type { Consumer, JetStreamClient, JetStreamManager, JsMsg } from "npm:@nats-io/jetstream@3.4.0";
export type { KV } from "npm:@nats-io/kv@3.4.0";
export type { ObjectStore } from "npm:@nats-io/obj@3.4.0";

/** The pinned packages, by the part of the client each is. */
export const NATS_PACKAGES = {
  transport: "npm:@nats-io/transport-node@3.4.0",
  jetstream: "npm:@nats-io/jetstream@3.4.0",
  kv: "npm:@nats-io/kv@3.4.0",
  obj: "npm:@nats-io/obj@3.4.0",
} as const;

/** The loaded client: the connection and nkeys, JetStream, its key-value buckets and its object stores. */
export interface NatsLib {
  transport: typeof import("npm:@nats-io/transport-node@3.4.0");
  jetstream: typeof import("npm:@nats-io/jetstream@3.4.0");
  kv: typeof import("npm:@nats-io/kv@3.4.0");
  obj: typeof import("npm:@nats-io/obj@3.4.0");
}

let loaded: Promise<NatsLib> | undefined;

/**
 * The NATS client, imported the first time it is asked for (once per process).
 *
 * @example
 * ```ts
 * const { transport } = await natsLib();
 * const user = transport.nkeys.createUser();
 * ```
 */
export function natsLib(): Promise<NatsLib> {
  const p: Record<keyof NatsLib, string> = NATS_PACKAGES;
  return loaded ??= Promise.all([import(p.transport), import(p.jetstream), import(p.kv), import(p.obj)])
    .then(([transport, jetstream, kv, obj]) => ({ transport, jetstream, kv, obj }));
}
