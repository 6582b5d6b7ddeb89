/**
 * The cluster's connection to NATS JetStream and the names it uses there. One run per server: the learner owns the
 * streams and buckets below and purges the queues when it starts.
 *
 * - `CRUCIBLE_PROMPTS` (subject crucible.prompts): a work queue of prompt groups; one durable pull consumer,
 *   `workers`, shared by every worker: a message goes to one worker, is acknowledged after its trajectories are
 *   published, and is delivered again after `cluster.ack_wait_s` without a heartbeat, at most `cluster.max_deliver`
 *   times. Message ids deduplicate republished prompts on the server.
 * - `CRUCIBLE_TRAJECTORIES` (subjects crucible.trajectories.WORKER): played groups, each on its worker's own subject
 *   (with credentials, the server lets a worker publish on its own alone); the learner reads them in order, checks
 *   each (admit.ts) and drops a group it already has (a redelivered prompt played twice).
 * - KV bucket `crucible`: `run` (the learner's config and run id) and `version` (the newest policy version, its
 *   object's name and SHA-256).
 * - Object store `crucible-weights`: one safetensors object per policy version (chunked by JetStream).
 *
 * The learner makes the streams and buckets; a worker only opens them (with credentials it may not make them).
 * With credentials (credentials.ts) a member signs in with its nkey and, where the server speaks TLS, trusts the
 * cluster's CA alone. Without them a server beyond loopback is refused here: a cluster anyone on the network can
 * write to is one whose learner trains on whatever it is sent.
 */
import { isLoopback } from "../env/server/access.ts";
import { connectOptions, type Credentials, type Role } from "./credentials.ts";
import {
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type NatsConnection,
  natsLib,
  type ObjectStore,
} from "./nats_lib.ts";

export const PROMPTS = "CRUCIBLE_PROMPTS";
export const PROMPT_SUBJECT = "crucible.prompts";
export const TRAJECTORIES = "CRUCIBLE_TRAJECTORIES";
/** Worker NAME publishes its groups on `crucible.trajectories.NAME`. */
export const TRAJECTORY_SUBJECT = "crucible.trajectories";
export const WORKERS = "workers";
export const KV_BUCKET = "crucible";
export const WEIGHTS_BUCKET = "crucible-weights";

/** How to start a server, for messages. */
export const START_HINT = "start one with: deno task cluster up (or nats-server -js -sd DIR)";

/** An open connection with JetStream and the run's buckets. */
export interface Cluster {
  url: string;
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  weights: ObjectStore;
  close(): Promise<void>;
}

/** How long a member keeps trying a connect whose handshake times out (a loaded machine), in seconds. */
const CONNECT_WAIT_S = 30;

/** How a member connects: its name for the server's logs, its role, and its credentials (none: loopback only). */
export interface ConnectOptions {
  name?: string;
  /** The learner makes the streams and buckets; a worker only opens them. Default the credentials' role, else learner. */
  role?: Role;
  creds?: Credentials;
  /** Told, once connected without credentials, what that leaves open (noCredentialsNote). */
  note?: (line: string) => void;
}

/** The line a member without credentials prints once: loopback only, and what that leaves open. */
export function noCredentialsNote(url: string): string {
  return `note: the cluster at ${url} is joined without credentials: it is on loopback, so only this machine can ` +
    "reach it, and every process on this machine can join it (docs/security.md; cluster up --auth asks for them)";
}

/**
 * Connects to `url`, within a few seconds, and checks that JetStream is on. Errors say which of the two failed and
 * how to start a server, or that the credentials were refused; the client reconnects on its own after a server
 * restart. A URL beyond loopback without credentials is refused before connecting.
 */
export async function connectCluster(url: string, o: ConnectOptions = {}): Promise<Cluster> {
  const role = o.role ?? o.creds?.role ?? "learner";
  if (!o.creds && !isLoopback(hostOf(url))) {
    throw new TypeError(
      `The cluster at ${url} is beyond loopback: give this ${role} its credentials with --creds FILE (deno task ` +
        `cluster up wrote them in its data directory's creds/, e.g. runs/nats/creds/${
          role === "learner" ? "learner" : "worker-NAME"
        }.creds)`,
    );
  }
  const lib = await natsLib();
  let nc: NatsConnection | undefined;
  // A handshake that misses its 3 s deadline (TLS and the nonce's signature on a machine starved of CPU) is tried
  // again for up to CONNECT_WAIT_S; nothing listening, or a refusal, fails at once.
  const deadline = performance.now() + CONNECT_WAIT_S * 1000;
  while (!nc) {
    try {
      nc = await lib.transport.connect({
        servers: url,
        name: o.name,
        timeout: 3000,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        ...(o.creds ? connectOptions(o.creds, lib.transport) : {}),
      });
    } catch (e) {
      if (!timedOut(e) || performance.now() > deadline) throw connectError(url, e as Error, o.creds);
    }
  }
  try {
    // A process's first requests, often to a server just started, on a machine that may be loaded: one whose answer
    // misses its deadline is made again, as later requests are (`retrying`, timeouts only); a server without
    // JetStream, or a refusal, still fails at once.
    const slow = { only: timedOut };
    const jsm = await retrying(
      `Checking JetStream at ${url}`,
      () => lib.jetstream.jetstreamManager(nc, { timeout: 3000 }),
      slow,
    );
    const js = lib.jetstream.jetstream(nc, { timeout: 10_000 });
    const kv = await retrying(
      `Opening the key-value bucket ${KV_BUCKET}`,
      () =>
        role === "learner" ? new lib.kv.Kvm(js).create(KV_BUCKET, { history: 1 }) : new lib.kv.Kvm(js).open(KV_BUCKET),
      slow,
    );
    const weights = await retrying(
      `Opening the object store ${WEIGHTS_BUCKET}`,
      () =>
        role === "learner"
          ? new lib.obj.Objm(js).create(WEIGHTS_BUCKET)
          : new lib.obj.Objm(js).open(WEIGHTS_BUCKET, false),
      slow,
    );
    if (!o.creds) o.note?.(noCredentialsNote(url));
    return { url, nc, js, jsm, kv, weights, close: () => nc.drain().catch(() => nc.close()) };
  } catch (e) {
    await nc.close();
    const m = (e as Error).message;
    if (/jetstream is not enabled|no responders|JetStreamNotEnabled/i.test(`${m} ${(e as Error).name}`)) {
      throw new Deno.errors.NotSupported(
        `The NATS server at ${url} runs without JetStream, which the cluster needs (work queues, key-value and ` +
          `object stores); restart it with -js (nats-server -js -sd DIR), or use deno task cluster up`,
      );
    }
    throw e;
  }
}

function hostOf(url: string): string {
  return URL.parse(url.replace(/^(nats|tls):/, "http:"))?.hostname ?? url;
}

/** A failed connect as the user can act on it: nothing there, credentials refused or missing, or a wrong server. */
function connectError(url: string, e: Error, creds: Credentials | undefined): Error {
  const m = `${e.message} ${(e.cause as Error | undefined)?.message ?? ""}`;
  if (/authorization|authentication/i.test(m)) {
    return new Deno.errors.PermissionDenied(
      creds
        ? `The NATS server at ${url} refused the credentials of ${creds.role} ${creds.name} (${e.message}): they ` +
          "are not this cluster's, or the worker was revoked; use a file its cluster up wrote (DATA/creds)"
        : `The NATS server at ${url} asks for credentials: pass --creds FILE (a file deno task cluster up wrote ` +
          "in its data directory's creds/)",
    );
  }
  // With a CA given, nats.js speaks TLS or nothing, on every connect and reconnect: a server at the cluster's address
  // that offers no TLS is refused as one whose certificate does not chain to the CA is.
  if (/does not support 'tls'/.test(m)) {
    return new Deno.errors.PermissionDenied(
      `The server at ${url} does not speak TLS, which this cluster's credentials require: it is not the cluster's ` +
        "server (check the URL, and who answers at that address)",
    );
  }
  if (/tls|certificate|self.signed|altname|ssl/i.test(m)) {
    return new Deno.errors.PermissionDenied(
      creds?.ca
        ? `The NATS server at ${url} did not prove it is the cluster of these credentials (TLS: ${e.message}); ` +
          "check the URL, or, for a name the certificate lacks, restart cluster up with --tls-name NAME"
        : `The NATS server at ${url} requires TLS (${e.message}): pass --creds FILE, a file its cluster up wrote`,
    );
  }
  return new Deno.errors.ConnectionRefused(
    `No NATS server answers at ${url} (${e.message}); ${START_HINT}, then pass --cluster with its URL`,
  );
}

/** The learner's streams and the workers' consumer, made or updated to the config, and emptied for a new run. */
export async function prepareStreams(
  c: Cluster,
  o: { ackWaitSeconds: number; maxDeliver: number; maxPayload?: number },
): Promise<void> {
  const ensure = async (name: string, subject: string, workQueue: boolean) => {
    const config = {
      name,
      subjects: [subject],
      retention: workQueue ? "workqueue" : "limits",
      duplicate_window: 10 * 60 * 1e9,
      // deno-lint-ignore no-explicit-any
    } as any;
    // Made only where the server says there is none: a request that timed out says nothing either way.
    const exists = await c.jsm.streams.info(name).then(() => true, (e) => notFound(e) ? false : Promise.reject(e));
    if (exists) await c.jsm.streams.update(name, config);
    else await c.jsm.streams.add(config);
    await c.jsm.streams.purge(name);
  };
  await ensure(PROMPTS, PROMPT_SUBJECT, true);
  await ensure(TRAJECTORIES, `${TRAJECTORY_SUBJECT}.*`, false);
  const consumer = {
    durable_name: WORKERS,
    ack_policy: "explicit",
    ack_wait: Math.round(o.ackWaitSeconds * 1e9),
    max_deliver: o.maxDeliver,
    max_ack_pending: -1,
    // deno-lint-ignore no-explicit-any
  } as any;
  const made = await c.jsm.consumers.update(PROMPTS, WORKERS, consumer).then(
    () => true,
    (e) => notFound(e) ? false : Promise.reject(e),
  );
  if (!made) await c.jsm.consumers.add(PROMPTS, consumer);
}

/** Whether the server answered that a stream or consumer does not exist. */
function notFound(e: unknown): boolean {
  return e instanceof Error && (/NotFound/.test(e.name) || /not found/i.test(e.message));
}

/** Prompts waiting in the queue and held by workers, unacknowledged. */
export async function queueDepth(c: Cluster): Promise<{ pending: number; playing: number }> {
  const info = await c.jsm.consumers.info(PROMPTS, WORKERS);
  return { pending: info.num_pending, playing: info.num_ack_pending };
}

/** Options of {@linkcode retrying}. */
export interface RetryOptions {
  /** How long to keep trying; default 60 s. */
  seconds?: number;
  /** The errors worth another try (default: all but our own); others are thrown at once. */
  only?: (e: unknown) => boolean;
}

/**
 * Runs a request to the server again while the connection is down (a server restart) or the answer is late (a
 * server or client starved of CPU on a loaded machine): every 500 ms for up to `o.seconds`, then the last error,
 * its message prefixed with `what`. Errors of our own (a refused hash, a bad message) and those `o.only` rejects
 * are thrown at once, as they are.
 */
export async function retrying<T>(what: string, f: () => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const start = performance.now(), seconds = o.seconds ?? 60;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      const ours = e instanceof TypeError || e instanceof RangeError || e instanceof SyntaxError;
      if (ours || (o.only && !o.only(e))) throw e;
      if (performance.now() - start > seconds * 1000) {
        (e as Error).message = `${what}: ${(e as Error).message}`;
        throw e;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * Whether a request failed for want of an answer within its deadline (nats.js's TimeoutError): the server may
 * still be there, slow, and the request is worth another try.
 */
export function timedOut(e: unknown): boolean {
  return e instanceof Error && e.name === "TimeoutError";
}
