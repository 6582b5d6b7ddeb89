/**
 * The failure budget of a run's RL steps: a step whose episodes mostly failed in the environment is abandoned (no
 * update, the same prompts run again), and abandoning is bounded twice, by attempts of one step in a row
 * (`env.max_step_retries`) and by abandoned steps over the whole run (`env.max_abandoned_steps`). An outage is
 * measured by failed episodes over time: the clock starts at the first abandoned step of a streak and only a step
 * that counts stops it, so a server that answers a create but fails its episodes cannot keep a run waiting forever.
 * Each abandoned step names why and which servers, from the episodes' error messages.
 */
import type { Trajectory } from "../rollout/trajectory.ts";

/** Limits of a budget. */
export interface BudgetLimits {
  /** Abandoned attempts of one step in a row before the run stops. */
  maxStepRetries: number;
  /** Abandoned steps over the whole run (this process) before it stops. */
  maxAbandoned: number;
  /** Longest streak of abandoned steps, in milliseconds, before the run stops. */
  outageMs: number;
  /** The clock, in milliseconds (tests). */
  now?: () => number;
}

/** What an abandoned step saw: failures by server and by kind of error. */
export interface Abandoned {
  failed: number;
  episodes: number;
  /** `{server: {kind: count}}` over the failed episodes. */
  mix: Record<string, Record<string, number>>;
  /** The first failure's message. */
  why: string;
  /** This step's abandoned attempts in a row, and the run's abandoned steps so far. */
  attempt: number;
  total: number;
  /** Set when the budget is spent: the sentence saying which limit. */
  spent?: string;
}

/** Counts abandoned steps against the limits. */
export class FailureBudget {
  #attempt = 0;
  #total = 0;
  #since: number | undefined;
  readonly #mix: Record<string, Record<string, number>> = {};
  readonly #now: () => number;

  constructor(readonly limits: BudgetLimits) {
    this.#now = limits.now ?? (() => performance.now());
  }

  /** Records an abandoned step; `spent` is set when a limit is passed. */
  abandon(ts: readonly Trajectory[]): Abandoned {
    this.#attempt++;
    this.#total++;
    this.#since ??= this.#now();
    const failed = ts.filter((t) => t.finish === "env_failure");
    const out: Abandoned = {
      failed: failed.length,
      episodes: ts.length,
      mix: errorMix(failed.map((t) => t.error ?? "")),
      why: failed[0]?.error ?? "no answer",
      attempt: this.#attempt,
      total: this.#total,
    };
    for (const [server, kinds] of Object.entries(out.mix)) {
      const into = (this.#mix[server] ??= {});
      for (const [k, n] of Object.entries(kinds)) into[k] = (into[k] ?? 0) + n;
    }
    const l = this.limits, minutes = (this.#now() - this.#since) / 60_000;
    if (this.#attempt > l.maxStepRetries) {
      out.spent =
        `the same step was abandoned ${this.#attempt} times in a row (env.max_step_retries=${l.maxStepRetries})`;
    } else if (this.#total > l.maxAbandoned) {
      out.spent = `${this.#total} steps were abandoned in this run (env.max_abandoned_steps=${l.maxAbandoned})`;
    } else if (this.#now() - this.#since > l.outageMs) {
      out.spent = `episodes kept failing for ${minutes.toFixed(1)} min (env.outage_minutes=${l.outageMs / 60_000})`;
    }
    return out;
  }

  /** Failures of every abandoned step so far, by server and kind. */
  get mix(): Record<string, Record<string, number>> {
    return this.#mix;
  }

  /** Milliseconds left of the outage allowance of the current streak. */
  outageLeftMs(): number {
    return this.limits.outageMs - (this.#since === undefined ? 0 : this.#now() - this.#since);
  }

  /** Records a step that counted: the streak and the outage clock end. */
  counted(): void {
    this.#attempt = 0;
    this.#since = undefined;
  }
}

/** The kind of an environment error message, short: "HTTP 500", "not JSON", "timeout", ... */
export function errorKind(message: string): string {
  const status = /HTTP (\d{3})/.exec(message);
  if (status) return `HTTP ${status[1]}`;
  const kinds: [RegExp, string][] = [
    [/not JSON/, "not JSON"],
    [/unexpected answer/, "malformed answer"],
    [/reported an error/, "error body"],
    [/no answer within/, "timeout"],
    [/connection failed/, "connection"],
    [/no healthy server/, "unavailable"],
  ];
  return kinds.find(([re]) => re.test(message))?.[1] ?? (message.slice(0, 40) || "unknown");
}

/** The server (scheme, host and port) an environment error message names, or "unknown". */
export function errorServer(message: string): string {
  return /\((https?:\/\/[^/)\s]+)/.exec(message)?.[1] ?? "unknown";
}

/** Failures counted by server, then by kind. */
export function errorMix(messages: readonly string[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const m of messages) {
    const s = (out[errorServer(m)] ??= {}), k = errorKind(m);
    s[k] = (s[k] ?? 0) + 1;
  }
  return out;
}

/** A mix as text: "http://h:1 (HTTP 500 x3, not JSON x1); http://h:2 (timeout x2)". */
export function mixText(mix: Record<string, Record<string, number>>): string {
  return Object.entries(mix).map(([server, kinds]) =>
    `${server} (${Object.entries(kinds).map(([k, n]) => `${k} x${n}`).join(", ")})`
  ).join("; ");
}
