/**
 * The cluster's connection to NATS JetStream and the names it uses there. One run per server: the learner owns the
 * streams and buckets below and purges the queues when it starts.
 *
 * - `CRUCIBLE_PROMPTS` (subject crucible.prompts): a work queue of prompt groups; one durable pull consumer,
 *   `workers`, shared by every worker: a message goes to one worker, is acknowledged after its trajectories are
 *   published, and is delivered again after `cluster.ack_wait_s` without a heartbeat, at most `cluster.max_deliver`
 *   times. Message ids deduplicate republished prompts on the server.
 * - `CRUCIBLE_TRAJECTORIES` (subject crucible.trajectories): played groups; the learner reads them in order and
 *   drops a group it already has (a redelivered prompt played twice).
 * - KV bucket `crucible`: `run` (the learner's config and run id) and `version` (the newest policy version, its
 *   object's name and SHA-256).
 * - Object store `crucible-weights`: one safetensors object per policy version (chunked by JetStream).
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, type JetStreamClient, type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { type KV, Kvm } from "@nats-io/kv";
import { type ObjectStore, Objm } from "@nats-io/obj";

export const PROMPTS = "CRUCIBLE_PROMPTS";
export const PROMPT_SUBJECT = "crucible.prompts";
export const TRAJECTORIES = "CRUCIBLE_TRAJECTORIES";
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

/**
 * Connects to `url`, within a few seconds, and checks that JetStream is on. Errors say which of the two failed and
 * how to start a server; the client reconnects on its own after a server restart.
 */
export async function connectCluster(url: string, o: { name?: string } = {}): Promise<Cluster> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: url,
      name: o.name,
      timeout: 3000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
  } catch (e) {
    throw new Deno.errors.ConnectionRefused(
      `No NATS server answers at ${url} (${(e as Error).message}); ${START_HINT}, then pass --cluster with its URL`,
    );
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: 3000 });
    const js = jetstream(nc, { timeout: 10_000 });
    const kv = await new Kvm(js).create(KV_BUCKET, { history: 1 });
    const weights = await new Objm(js).create(WEIGHTS_BUCKET);
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
    try {
      await c.jsm.streams.info(name);
      await c.jsm.streams.update(name, config);
    } catch {
      await c.jsm.streams.add(config);
    }
    await c.jsm.streams.purge(name);
  };
  await ensure(PROMPTS, PROMPT_SUBJECT, true);
  await ensure(TRAJECTORIES, TRAJECTORY_SUBJECT, false);
  const consumer = {
    durable_name: WORKERS,
    ack_policy: "explicit",
    ack_wait: Math.round(o.ackWaitSeconds * 1e9),
    max_deliver: o.maxDeliver,
    max_ack_pending: -1,
    // deno-lint-ignore no-explicit-any
  } as any;
  try {
    await c.jsm.consumers.update(PROMPTS, WORKERS, consumer);
  } catch {
    await c.jsm.consumers.add(PROMPTS, consumer);
  }
}

/** Prompts waiting in the queue and held by workers, unacknowledged. */
export async function queueDepth(c: Cluster): Promise<{ pending: number; playing: number }> {
  const info = await c.jsm.consumers.info(PROMPTS, WORKERS);
  return { pending: info.num_pending, playing: info.num_ack_pending };
}

/**
 * Runs a request to the server again while the connection is down (a server restart): every 500 ms for up to
 * `seconds`, then the last error. Errors of our own (a refused hash, a bad message) are not retried.
 */
export async function retrying<T>(what: string, f: () => Promise<T>, seconds = 60): Promise<T> {
  const start = performance.now();
  for (;;) {
    try {
      return await f();
    } catch (e) {
      const ours = e instanceof TypeError || e instanceof RangeError || e instanceof SyntaxError;
      if (ours || performance.now() - start > seconds * 1000) {
        if (!ours) (e as Error).message = `${what}: ${(e as Error).message}`;
        throw e;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
