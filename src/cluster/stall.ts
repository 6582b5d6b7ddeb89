/**
 * What the learner says while a step waits for its groups (every 30 s, learner.ts): how many are in, what each worker
 * it heard from did (groups taken, refusals, dropped), what the prompt queue holds, and from that the likeliest
 * reason nothing more arrives: no worker taking prompts, workers holding prompts without publishing, every worker
 * dropped, or the step's prompts gone from the queue with no group the learner could take.
 *
 * @example
 * ```ts
 * stallNote({ step: 1, have: 0, want: 2, seconds: 30, url: "nats://127.0.0.1:4222", refused: 10, duplicates: 0,
 *   queue: { pending: 2, playing: 0 },
 *   workers: [{ name: "m", groups: 0, refused: { prompt: 10 }, dropped: true }] });
 * // "Step 1: 0 of 2 groups in after 30 s. Workers: m dropped, 10 messages refused (prompt: 10). Queue: 2 ..."
 * ```
 */

/** What a worker did this run, as the learner saw it. */
export interface WorkerSeen {
  name: string;
  /** Groups of it the learner took. */
  groups: number;
  /** Seconds since its last group was taken; absent before its first. */
  lastSeconds?: number;
  /** Its messages refused, by reason (those not its fault included). */
  refused: Readonly<Record<string, number>>;
  /** Whether the learner dropped it (cluster.max_bad_messages). */
  dropped: boolean;
}

/** What the learner knows of a step that waits. */
export interface StallFacts {
  step: number;
  have: number;
  want: number;
  seconds: number;
  /** The cluster's URL, for the worker command. */
  url: string;
  /** Prompts waiting in the queue and held by workers, when the server answered. */
  queue?: { pending: number; playing: number };
  workers: readonly WorkerSeen[];
  /** Messages refused and duplicates dropped this run. */
  refused: number;
  duplicates: number;
  /** What was wrong with the version key, when it did not hold the version the learner published (put back since). */
  versionKey?: string;
}

/** The line the learner prints; see the module header. */
export function stallNote(f: StallFacts): string {
  const parts = [`Step ${f.step}: ${f.have} of ${f.want} groups in after ${f.seconds.toFixed(0)} s.`];
  if (f.workers.length > 0) parts.push(`Workers: ${f.workers.map(describe).join("; ")}.`);
  const q = f.queue;
  if (q) parts.push(`Queue: ${count(q.pending, "prompt")} waiting, ${count(q.playing, "prompt")} held by workers.`);
  if (f.versionKey) parts.push(`The version key did not hold the learner's version (${f.versionKey}); put back.`);
  parts.push(why(f));
  return parts.join(" ");
}

function why(f: StallFacts): string {
  const start = `start one: deno task worker --cluster ${f.url}`;
  const live = f.workers.filter((w) => !w.dropped);
  if (f.workers.length > 0 && live.length === 0) {
    return `Every worker the learner heard from was dropped for its refused messages; ${start}`;
  }
  if (f.queue && f.queue.playing > 0) {
    return "Workers hold prompts without publishing their groups: slow, or stalled (a prompt goes to another " +
      "worker after cluster.ack_wait_s without a heartbeat, at most cluster.max_deliver times).";
  }
  if (f.queue && f.queue.pending > 0) return `No worker is taking prompts: is one running? ${start}`;
  if (f.queue) {
    const refused = f.refused > 0 ? `${count(f.refused, "message")} refused (metrics.jsonl rejected_REASON)` : "";
    const dups = f.duplicates > 0 ? `${count(f.duplicates, "duplicate")} dropped` : "";
    const seen = [refused, dups].filter((x) => x).join(", ") || "nothing refused";
    return `The queue holds no prompt: they were taken and acknowledged, but no group the learner could take came ` +
      `back (${seen}).`;
  }
  return `Is a worker running? ${start}`;
}

function describe(w: WorkerSeen): string {
  const refused = Object.entries(w.refused).map(([r, n]) => `${r}: ${n}`).join(", ");
  const total = Object.values(w.refused).reduce((a, n) => a + n, 0);
  if (w.dropped) return `${w.name} dropped, ${count(total, "message")} refused (${refused})`;
  const last = w.lastSeconds === undefined ? "" : `, the last ${w.lastSeconds.toFixed(0)} s ago`;
  return `${w.name} sent ${count(w.groups, "group")}${last}${total > 0 ? `, ${total} refused (${refused})` : ""}`;
}

function count(n: number, what: string): string {
  return `${n === 0 ? "no" : n} ${what}${n === 1 ? "" : "s"}`;
}
