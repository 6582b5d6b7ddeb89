/**
 * What travels over the cluster's streams, as JSON: a prompt group for a worker to play, and the group it played.
 * JSON keeps every number exact (a float64 prints as the shortest text that reads back to the same bits), so
 * sampler log-probabilities reach the learner as the worker computed them. A group message is read by the learner
 * through admit.ts's checks, never trusted as sent.
 *
 * A group's stream message id ({@linkcode groupMessageId}) is its worker's name and its bytes' SHA-256. The trajectory
 * stream drops a message whose id it saw in the last ten minutes, across every worker's subject: an id a worker could
 * predict (the prompt's, say) would let it publish first under another worker's id and have that worker's group
 * dropped. No worker knows another's bytes before they are sent (timings are in them), and the learner refuses a
 * message whose id is not its sender's and its bytes' (admit.ts), so each worker has an id space of its own.
 */
import { createHash } from "node:crypto";
import type { RolloutOptions } from "../rollout/agent.ts";
import type { Trajectory } from "../rollout/trajectory.ts";

/** One prompt group: all rollout.n episodes of one prompt, played by one worker. */
export interface PromptMessage {
  /** The learner's run id: a worker drops prompts of a run that is not the current one. */
  run: string;
  /** Unique per publication (step, group and replay), the dedup id on the server. */
  id: string;
  step: number;
  group: number;
  /** Groups in the step (a worker that takes one waits briefly for the others to be published). */
  groups: number;
  task: number;
  /** One seed per episode. */
  seeds: number[];
  /** The oldest policy version that may sample it: step − 1 − rollout.max_staleness. */
  minVersion: number;
  options: Omit<RolloutOptions, "onEpisode" | "timing">;
}

/** A played group. */
export interface GroupMessage {
  run: string;
  /** The prompt's id. */
  id: string;
  step: number;
  group: number;
  /** The policy version that sampled every episode of the group. */
  version: number;
  worker: string;
  /** How many times JetStream had delivered the prompt when this worker played it (> 1: a replay). */
  deliveries: number;
  seconds: { play: number; prefill: number; decode: number; env: number };
  trajectories: Trajectory[];
}

const enc = new TextEncoder(), dec = new TextDecoder();

/** A message's bytes. */
export function encode(m: PromptMessage | GroupMessage): Uint8Array {
  return enc.encode(JSON.stringify(m));
}

/**
 * The stream message id of a played group: `WORKER-SHA256` of its bytes (see the module header). A publish retried
 * after a lost answer sends the same bytes under the same id, and the stream stores it once.
 *
 * @example
 * ```ts
 * groupMessageId("a", new TextEncoder().encode("{}")); // "a-44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
 * ```
 */
export function groupMessageId(worker: string, bytes: Uint8Array): string {
  return `${worker}-${createHash("sha256").update(bytes).digest("hex")}`;
}

/** A prompt message from bytes; a SyntaxError names what is missing. */
export function decodePrompt(bytes: Uint8Array): PromptMessage {
  return check(JSON.parse(dec.decode(bytes)), [
    "run",
    "id",
    "step",
    "group",
    "groups",
    "task",
    "seeds",
    "minVersion",
    "options",
  ]);
}

function check<T>(value: Record<string, unknown>, keys: readonly string[]): T {
  const missing = keys.filter((k) => !(k in value));
  if (missing.length > 0) {
    throw new SyntaxError(`A cluster message lacks ${missing.join(", ")}: another version sent it`);
  }
  return value as T;
}
