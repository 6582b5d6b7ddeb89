/**
 * The HTTP layer under every adapter: one or more servers of one environment, spread round-robin for new
 * environments, with a per-request timeout, retries with exponential backoff for connection failures, timeouts and
 * 5xx (never for 4xx or error bodies), a cap on requests in flight per server, and a health check that takes a dead
 * server out of the rotation and puts it back once `GET /` answers again.
 *
 * Retrying a POST that timed out may run it twice on a server that did receive it (upstream's clients retry 503s
 * the same way); an episode whose step was doubled still ends with the server's own reward.
 */
import type { z } from "zod";
import { EnvError, type EnvErrorKind } from "./errors.ts";

/** Settings of a transport. Only `urls` is required. */
export interface TransportOptions {
  /** Base URLs of the servers of one environment, e.g. `["http://127.0.0.1:36001"]`. */
  urls: readonly string[];
  /** Per-request limit in milliseconds, body included. Default 60000. */
  timeoutMs?: number;
  /** Extra attempts after the first for retryable failures. Default 3. */
  retries?: number;
  /** First backoff in milliseconds; doubles each retry, capped at 5000. Default 200. */
  backoffMs?: number;
  /** Most requests in flight per server; more wait their turn. Default 64. */
  maxInFlight?: number;
  /** How often a server marked down is probed, in milliseconds. Default 5000. */
  healthIntervalMs?: number;
  /** A key sent with every request (probes too) as `Authorization: Bearer KEY`. Default none. */
  token?: string;
  /**
   * What sends a request: the global `fetch` by default; a server's request handler called in-process where the game
   * runs in the same program (the studio page plays TextCraft in the page).
   */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * A request: query parameters for GET, a JSON body for POST (none when undefined), and limits of its own where a
 * route needs shorter ones than the transport's (a read checked before a run starts, which must not wait minutes).
 */
export interface Payload {
  query?: Record<string, string | number>;
  body?: unknown;
  /** This request's per-attempt limit in milliseconds; default the transport's `timeoutMs`. */
  timeoutMs?: number;
  /** This request's extra attempts; default the transport's `retries`. */
  retries?: number;
}

interface Server {
  url: string;
  healthy: boolean;
  inFlight: number;
  waiting: (() => void)[];
  probe?: ReturnType<typeof setInterval>;
}

/** Servers of one environment and the reliability rules around them. */
export class Transport {
  readonly #servers: Server[];
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #backoffMs: number;
  readonly #maxInFlight: number;
  readonly #healthMs: number;
  readonly #auth: Record<string, string>;
  readonly #fetch: (url: string, init: RequestInit) => Promise<Response>;
  #next = 0;

  /** Validates the settings; throws RangeError on an empty or malformed URL list or a bad number. */
  constructor(options: TransportOptions) {
    if (options.urls.length === 0) throw new RangeError("A transport needs at least one server URL, got none");
    this.#servers = options.urls.map((u) => {
      if (!/^https?:\/\/[^/]+/.test(u)) {
        throw new RangeError(`Server URL "${u}" is not http(s)://host:port; e.g. http://127.0.0.1:36001`);
      }
      return { url: u.replace(/\/+$/, ""), healthy: true, inFlight: 0, waiting: [] };
    });
    this.#timeoutMs = positive("timeoutMs", options.timeoutMs ?? 60_000);
    this.#retries = positive("retries", options.retries ?? 3, true);
    this.#backoffMs = positive("backoffMs", options.backoffMs ?? 200, true);
    this.#maxInFlight = positive("maxInFlight", options.maxInFlight ?? 64);
    this.#healthMs = positive("healthIntervalMs", options.healthIntervalMs ?? 5000);
    this.#auth = options.token ? { authorization: `Bearer ${options.token}` } : {};
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init));
  }

  /** The per-request limit and the retries every request gets unless its payload asks for its own. */
  get limits(): { timeoutMs: number; retries: number } {
    return { timeoutMs: this.#timeoutMs, retries: this.#retries };
  }

  /** The base URLs and whether each is in the rotation. */
  health(): { url: string; healthy: boolean }[] {
    return this.#servers.map((s) => ({ url: s.url, healthy: s.healthy }));
  }

  /** The next healthy server, round-robin; throws `EnvError` (`unavailable`) when every server is down. */
  pick(route: string): string {
    for (let i = 0; i < this.#servers.length; i++) {
      const s = this.#servers[(this.#next + i) % this.#servers.length];
      if (s.healthy) {
        this.#next = (this.#next + i + 1) % this.#servers.length;
        return s.url;
      }
    }
    const urls = this.#servers.map((s) => s.url).join(", ");
    throw new EnvError(`no healthy server among ${urls}; start one or wait for the health check`, {
      kind: "unavailable",
      route,
      url: urls,
    });
  }

  /** Sends a request to one server and validates the JSON answer with `schema`. */
  async request<T>(
    server: string,
    method: "GET" | "POST",
    path: string,
    schema: z.ZodType<T>,
    payload: Payload = {},
  ): Promise<T> {
    const s = this.#servers.find((x) => x.url === server);
    if (!s) throw new RangeError(`${server} is not a server of this transport; use one returned by pick()`);
    const route = `${method} ${path}`;
    const query = new URLSearchParams(Object.entries(payload.query ?? {}).map(([k, v]) => [k, String(v)]));
    const url = `${s.url}${path}${query.size > 0 ? `?${query}` : ""}`;
    const timeoutMs = positive("timeoutMs", payload.timeoutMs ?? this.#timeoutMs);
    const retries = positive("retries", payload.retries ?? this.#retries, true);
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#once(s, { method, url, route, timeoutMs }, schema, payload.body, attempt);
      } catch (e) {
        if (!(e instanceof EnvError) || !e.retryable || attempt > retries) {
          if (e instanceof EnvError && (e.kind === "timeout" || e.kind === "connection")) this.#markDown(s);
          throw e;
        }
        await sleep(Math.min(5000, this.#backoffMs * 2 ** (attempt - 1)));
      }
    }
  }

  /** Stops the health probes (call when done with the environment). */
  close(): void {
    for (const s of this.#servers) clearInterval(s.probe);
  }

  async #once<T>(
    s: Server,
    at: { method: string; url: string; route: string; timeoutMs: number },
    schema: z.ZodType<T>,
    body: unknown,
    n: number,
  ) {
    const { method, url, route, timeoutMs } = at;
    await this.#acquire(s);
    const fail = (kind: EnvErrorKind, message: string, extra: { status?: number; body?: string; cause?: unknown }) =>
      new EnvError(message, { kind, route, url, attempts: n, ...extra });
    let status = 0;
    let text = "";
    try {
      const res = await this.#fetch(url, {
        method,
        signal: AbortSignal.timeout(timeoutMs),
        headers: body === undefined ? this.#auth : { ...this.#auth, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      status = res.status;
      text = await res.text();
    } catch (e) {
      const timedOut = e instanceof DOMException && (e.name === "TimeoutError" || e.name === "AbortError");
      throw timedOut
        ? fail("timeout", `no answer within ${timeoutMs} ms`, { cause: e })
        : fail("connection", `connection failed: ${e instanceof Error ? e.message : e}`, { cause: e });
    } finally {
      this.#release(s);
    }
    if (status !== 200) throw fail("http", `HTTP ${status}`, { status, body: text });
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw fail("shape", "the answer is not JSON", { status, body: text, cause: e });
    }
    if (typeof value === "object" && value !== null && !Array.isArray(value) && "error" in value) {
      throw fail("error_body", `the server reported an error: ${String(value.error)}`, { status, body: text });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw fail("shape", `unexpected answer: ${parsed.error.message}`, { status, body: text, cause: parsed.error });
    }
    return parsed.data;
  }

  async #acquire(s: Server): Promise<void> {
    while (s.inFlight >= this.#maxInFlight) await new Promise<void>((resolve) => s.waiting.push(resolve));
    s.inFlight++;
  }

  #release(s: Server): void {
    s.inFlight--;
    s.waiting.shift()?.();
  }

  #markDown(s: Server): void {
    if (!s.healthy) return;
    s.healthy = false;
    s.probe = setInterval(async () => {
      try {
        const res = await this.#fetch(`${s.url}/`, {
          headers: this.#auth,
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
        await res.body?.cancel();
        if (res.status === 200) {
          s.healthy = true;
          clearInterval(s.probe);
        }
      } catch {
        // Still down: the next tick probes again.
      }
    }, this.#healthMs);
  }
}

function positive(name: string, n: number, zeroOk = false): number {
  if (!Number.isFinite(n) || n < 0 || (!zeroOk && n === 0)) {
    throw new RangeError(`Transport option ${name} must be a ${zeroOk ? "non-negative" : "positive"} number, got ${n}`);
  }
  return n;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
