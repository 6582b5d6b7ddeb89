/**
 * The one async interface in front of every AgentGym server: `create` an environment, `reset` it to a task,
 * `observe`, `step` with the model's text, `close`. Failures surface as `EnvError`, never as a reward of 0.
 *
 * @example
 * ```ts
 * const client = envClient("textcraft", { urls: ["http://127.0.0.1:36001"] });
 * const env = await client.create({ parseAction: textcraft.parseAction });
 * await env.reset(12);
 * const first = await env.observe();
 * const { observation, reward, done } = await env.step("Thought: ...\n\nAction:\nget 1 oak logs");
 * await env.close();
 * client.close();
 * ```
 */
import type { Adapter, Call, EnvId, StepResult, TaskSet } from "./adapter.ts";
import { EnvError } from "./errors.ts";
import { Transport, type TransportOptions } from "./http.ts";

/**
 * What a task makes of the model's text: the action to send, or a reply given without calling the server (e.g.
 * TextCraft's "Only one 'Action' is allowed" when the text holds two).
 */
export type ActionParse = { action: string } | { reply: StepResult };

/**
 * The limits of `GET /tasks`, read once before a run or an evaluation starts: an answer from memory, so 10 s and one
 * retry (at most about 20 s for a server that never answers) rather than the transport's 60 s and three.
 */
export const TASKS_LIMITS = { timeoutMs: 10_000, retries: 1 } as const;

/** Options of one environment session. */
export interface SessionOptions {
  /** Turns model text into an action; default: the text as it is. */
  parseAction?: (text: string) => ActionParse;
}

/** One live environment on one server. */
export interface EnvSession {
  /** The environment's name (its adapter's). */
  readonly env: string;
  /** The environment's id on the server that holds it. */
  readonly id: EnvId;
  /** Base URL of the server that holds it. */
  readonly server: string;
  /** Resets to task `index`; returns the first observation. */
  reset(index: number): Promise<string>;
  /**
   * What the server said about the task of the last reset (Crucible's BFCL server: the entry's id, category and
   * involved classes); undefined where it said nothing.
   */
  readonly info: Readonly<Record<string, unknown>> | undefined;
  /** The current observation (from the server where the adapter has a route for it, else the last one seen). */
  observe(): Promise<string>;
  /** Applies the model's text. */
  step(text: string): Promise<StepResult>;
  /** Releases the environment; a second call does nothing. */
  close(): Promise<void>;
}

/** A client for one environment kind over one or more servers. */
export class EnvClient {
  /** The protocol of the environment's servers. */
  readonly adapter: Adapter;
  /**
   * The servers' pool: requests with retries and backoff, health, the next server to use (src/env/http.ts).
   *
   * @ignore
   */
  readonly transport: Transport;

  /** A client over `options.urls` speaking `adapter`'s protocol. */
  constructor(adapter: Adapter, options: TransportOptions) {
    this.adapter = adapter;
    this.transport = new Transport(options);
  }

  /**
   * Creates an environment on the next healthy server; when that server fails past its retries with a transient
   * error (no answer, or a 5xx) the next one is tried, so a dead or failing server costs one round of retries rather
   * than the episode. A create answered 5xx may have made an environment there anyway: that one is reaped idle.
   */
  async create(options: SessionOptions = {}): Promise<EnvSession> {
    let lastError: EnvError | undefined;
    for (let i = 0; i < this.transport.health().length; i++) {
      let server: string;
      try {
        server = this.transport.pick("POST /create");
      } catch (e) {
        throw lastError ?? e;
      }
      try {
        const call = this.#callFor(server);
        const created = await this.adapter.create(call);
        return new Session(this.adapter, call, server, created.id, created.observation ?? "", options);
      } catch (e) {
        if (!(e instanceof EnvError) || !e.retryable) throw e;
        lastError = e;
      }
    }
    throw lastError!;
  }

  /**
   * The tasks the servers hold, where the protocol has a route for it (Crucible's BFCL server): undefined when it
   * has none, or every server answers 404 (one that predates the route). Every healthy server is asked, with limits
   * of this read's own (`limits`, default TASKS_LIMITS, never past the transport's), so a server that never answers
   * costs seconds rather than the transport's minutes of retries. A server that still fails (no answer, a 5xx, a
   * wrong shape) is an error naming it: the tasks it holds cannot be checked. Servers that hold different numbers of
   * tasks are an error too: a task index would mean a different task on each.
   */
  async tasks(limits: { timeoutMs?: number; retries?: number } = {}): Promise<TaskSet | undefined> {
    const ask = this.adapter.tasks;
    if (!ask) return undefined;
    const own = this.transport.limits;
    const read = {
      timeoutMs: limits.timeoutMs ?? Math.min(own.timeoutMs, TASKS_LIMITS.timeoutMs),
      retries: limits.retries ?? Math.min(own.retries, TASKS_LIMITS.retries),
    };
    const urls = this.transport.health().filter((h) => h.healthy).map((h) => h.url);
    const answers = await Promise.all(urls.map(async (url) => {
      try {
        return { url, set: await ask(this.#callFor(url, read)) };
      } catch (e) {
        if (e instanceof EnvError && e.kind === "http" && e.status === 404) return { url, set: undefined };
        if (e instanceof EnvError) throw this.#tasksError(e, url);
        throw e;
      }
    }));
    if (new Set(answers.map((a) => a.set?.count)).size > 1) {
      throw new RangeError(
        `The ${this.adapter.name} servers hold different task sets (${
          answers.map((a) => `${a.url}: ${a.set?.count ?? "unknown"} tasks`).join(", ")
        }); a task index must mean the same task on every server, so serve the same data on all of them.`,
      );
    }
    return answers[0]?.set;
  }

  /** A failed `GET /tasks` as an error that says what the read is for and what to check. */
  #tasksError(e: EnvError, url: string): EnvError {
    const why = e.message.slice(`${e.route} (${e.url}): `.length);
    const tries = e.attempts > 1 ? ` after ${e.attempts} attempts` : "";
    return new EnvError(
      `${why}${tries}. The ${this.adapter.name} server at ${url} must say which tasks it holds before a run plays ` +
        `them, to check the splits against them. Check that it runs and answers \`curl ${url}/tasks\` with ` +
        `{"count": ...} (a server without the route answers 404, and the check is skipped), or point --env-url ` +
        "(env.urls) at one that does.",
      { kind: e.kind, route: e.route, url: e.url, status: e.status, body: e.body, attempts: e.attempts, cause: e },
    );
  }

  /** Stops background health probes. */
  close(): void {
    this.transport.close();
  }

  #callFor(server: string, limits: { timeoutMs?: number; retries?: number } = {}): Call {
    return (method, path, schema, payload) =>
      this.transport.request(server, method, path, schema, { ...payload, ...limits });
  }
}

class Session implements EnvSession {
  readonly env: string;
  readonly id: EnvId;
  readonly server: string;
  readonly #adapter: Adapter;
  readonly #call: Call;
  readonly #parse: (text: string) => ActionParse;
  #observation: string;
  #info: Record<string, unknown> | undefined;
  #closed = false;

  constructor(adapter: Adapter, call: Call, server: string, id: EnvId, obs: string, o: SessionOptions) {
    this.env = adapter.name;
    this.#adapter = adapter;
    this.#call = call;
    this.server = server;
    this.id = id;
    this.#observation = obs;
    this.#parse = o.parseAction ?? ((text) => ({ action: text }));
  }

  async reset(index: number): Promise<string> {
    if (!Number.isSafeInteger(index)) throw new RangeError(`A task index is an integer, got ${index}`);
    this.#live("reset");
    const r = await this.#adapter.reset(this.#call, this.id, index);
    [this.#observation, this.#info] = typeof r === "string" ? [r, undefined] : [r.observation, r.info];
    return this.#observation;
  }

  get info(): Readonly<Record<string, unknown>> | undefined {
    return this.#info;
  }

  async observe(): Promise<string> {
    this.#live("observe");
    if (this.#adapter.observe) this.#observation = await this.#adapter.observe(this.#call, this.id);
    return this.#observation;
  }

  async step(text: string): Promise<StepResult> {
    this.#live("step");
    const parsed = this.#parse(text);
    if ("reply" in parsed) return parsed.reply;
    const out = await this.#adapter.step(this.#call, this.id, parsed.action);
    this.#observation = out.observation;
    return out;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#adapter.close?.(this.#call, this.id);
  }

  #live(what: string): void {
    if (this.#closed) throw new RangeError(`Cannot ${what} ${this.env} environment ${this.id}: it was closed`);
  }
}
