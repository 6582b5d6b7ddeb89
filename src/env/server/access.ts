/**
 * Who may call a server of Crucible's: the one rule every HTTP server here follows (the TextCraft and BFCL game
 * servers, `serve-model`, and any server to come), so that none is open to the network by accident.
 *
 * - Loopback (127.0.0.0/8, ::1, localhost) asks no key unless given one. Bound beyond loopback, a server refuses to
 *   start without a key (a RangeError naming the flag and the environment variable that give one).
 * - A key is at least 16 characters; a request carries it as `Authorization: Bearer KEY` (what OpenAI's clients send
 *   from `apiKey`). Keys are compared in constant time (per key, whatever the guess), and no message ever holds one.
 * - A request whose `Host` is not a name the server answers to is refused (421): the loopback names (localhost,
 *   127.0.0.0/8, ::1), the address it is bound to (bound to every interface: the machine's name and each
 *   interface's address), and the names added with `--allowed-host`. A DNS-rebinding page reaches a loopback server
 *   under its own name, so it is refused whatever it sends; a browser page of another origin is refused too (an
 *   `Origin` header other than the server's own, or `Sec-Fetch-Site` cross-site or same-site).
 * - A client is its address, and its key's place when several keys are given (one per client), so quotas hold per
 *   client: {@linkcode ClientCounts} counts what each holds (environments, requests in flight). What a client makes
 *   (an environment) belongs to its key, and a request with another key is answered as if it did not exist.
 *
 * Refusals come back as plain data ({@linkcode Refusal}); each server shapes them its own way (FastAPI's `{detail}`
 * for the game servers, OpenAI's `{error}` for serve-model).
 *
 * @example
 * ```ts
 * const access = new Access({ hostname: "0.0.0.0", keys: ["a-key-of-16-chars"], title: "my server",
 *   keyFlag: "--api-key", keyEnv: "MY_KEY" });
 * Deno.serve({ hostname: "0.0.0.0", port: 0 }, (req, info) => {
 *   const who = access.check(req, info.remoteAddr.hostname);
 *   if ("status" in who) return Response.json({ detail: who.message }, { status: who.status, headers: who.headers });
 *   return new Response(`hello, client ${who.client}`);
 * });
 * ```
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** Why a request is refused before any route sees it. */
export interface Refusal {
  /** 401 (no or a wrong key), 403 (a browser page of another origin) or 421 (a Host it does not answer to). */
  status: number;
  /** For the client: what was wrong and how to send it right; never a key. */
  message: string;
  /** `invalid_api_key`, `cross_origin` or `host_not_allowed`, for servers whose errors carry a code (OpenAI's). */
  code: string;
  headers: Record<string, string>;
}

/** Settings of {@linkcode Access}. */
export interface AccessOptions {
  /** The interface the server binds. */
  hostname: string;
  /** Keys, one of which every request must carry; empty or absent: none asked (loopback only). */
  keys?: readonly string[];
  /** The server's name in messages ("TextCraft", "serve-model"). */
  title: string;
  /** The command-line flag that gives a key (`--token`, `--api-key`). */
  keyFlag: string;
  /** The environment variable that gives a key (`CRUCIBLE_ENV_TOKEN`, `CRUCIBLE_API_KEY`). */
  keyEnv: string;
  /** The server's own origin (scheme, host, port), the one `Origin` a request may carry; read per request. */
  origin?: () => string;
  /**
   * The names a request's Host may carry: default {@linkcode servedNames} of `hostname`. A handler embedded behind
   * another listener is given its listener's.
   */
  hosts?: readonly string[];
}

/** Who a request comes from: its client (for quotas) and its key's place (what it made belongs to that key). */
export interface Caller {
  /** Its address, and its key's place when several keys are given. */
  client: string;
  /** Its key's place among the server's keys ("" when none is asked). */
  key: string;
}

/** The shortest key accepted. */
export const MIN_KEY_LENGTH = 16;

/** Whether `hostname` is a loopback address or name (127.0.0.0/8, ::1, localhost). */
export function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/** Whether `hostname` binds every interface (0.0.0.0, ::). */
function wildcard(hostname: string): boolean {
  const h = bare(hostname);
  return h === "0.0.0.0" || h === "::";
}

function bare(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
}

/**
 * This machine's names: its host name and every interface's address (what a client elsewhere may call it by). Empty
 * where Deno may not read them.
 */
export function machineNames(): string[] {
  const names: string[] = [];
  try {
    names.push(Deno.hostname());
  } catch { /* no permission: none */ }
  try {
    for (const i of Deno.networkInterfaces()) names.push(i.address.replace(/%.*$/, ""));
  } catch { /* as above */ }
  return names.filter((n) => n.length > 0);
}

/**
 * The names a server bound to `hostname` answers to: the loopback names, `hostname` itself (bound to every
 * interface: {@linkcode machineNames}), and `extra` (`--allowed-host`). Lower case, IPv6 without brackets.
 *
 * @example
 * ```ts
 * servedNames("127.0.0.1", ["crucible.lan"]); // ["localhost", "127.0.0.1", "::1", "crucible.lan"]
 * ```
 */
export function servedNames(hostname: string, extra: readonly string[] = []): string[] {
  const names = ["localhost", "127.0.0.1", "::1", ...(wildcard(hostname) ? machineNames() : [hostname]), ...extra];
  return [...new Set(names.map(bare))];
}

/** The host name of a Host header's value (`name:port`, `[v6]:port`), lower case, without brackets or port. */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  const v6 = /^\[([^\]]*)\]/.exec(h);
  if (v6) return v6[1];
  return h.includes(":") && h.indexOf(":") === h.lastIndexOf(":") ? h.slice(0, h.indexOf(":")) : h;
}

/**
 * A 421 for a request whose Host is not one of `hosts` (servedNames) nor a loopback name; undefined when it is, or
 * when the request carries no Host (no browser sends such a request).
 */
export function hostRefusal(req: Request, hosts: ReadonlySet<string>): Refusal | undefined {
  const host = req.headers.get("host");
  if (host === null || hosts.has(hostName(host)) || isLoopback(hostName(host))) return undefined;
  return {
    status: 421,
    message:
      `Host ${JSON.stringify(host.slice(0, 100))} is not a name this server answers to (${
        [...hosts].join(", ")
      }), so the request is refused: a page that reached it under another name (DNS rebinding) must not be ` +
      "answered. Call it by one of those names, or start it with --allowed-host NAME to add one.",
    code: "host_not_allowed",
    headers: {},
  };
}

/** Keys from a flag's values, else from the environment variable `name` (unset or empty: none). */
export function keysFrom(given: string | readonly string[] | undefined, name: string): string[] {
  const list = typeof given === "string" ? [given] : [...(given ?? [])];
  if (list.length > 0) return list;
  let fromEnv: string | undefined;
  try {
    fromEnv = Deno.env.get(name);
  } catch {
    fromEnv = undefined; // no permission to read the environment: no key
  }
  return fromEnv ? [fromEnv] : [];
}

/** The key and origin rules of one server; see the module header. */
export class Access {
  readonly #keys: readonly string[];
  readonly #o: AccessOptions;
  readonly #hosts: ReadonlySet<string>;

  /** Throws RangeError for a key under 16 characters, or a bind beyond loopback without a key. */
  constructor(o: AccessOptions) {
    this.#o = o;
    this.#keys = [...(o.keys ?? [])];
    this.#hosts = new Set((o.hosts ?? servedNames(o.hostname)).map(hostName));
    if (this.#keys.some((k) => k.length < MIN_KEY_LENGTH)) {
      throw new RangeError(
        `A server key must be at least ${MIN_KEY_LENGTH} characters long; make one with: openssl rand -hex 16`,
      );
    }
    if (!isLoopback(o.hostname) && this.#keys.length === 0) {
      throw new RangeError(
        `Binding ${o.hostname}, beyond loopback, needs a key that every request must carry: pass ${o.keyFlag} KEY ` +
          `or set ${o.keyEnv} (make one with: openssl rand -hex 16), or bind 127.0.0.1.`,
      );
    }
  }

  /** Whether requests must carry a key. */
  get keyed(): boolean {
    return this.#keys.length > 0;
  }

  /**
   * Who a request comes from (`address`, the TCP peer, and its key), or why it is refused: a Host the server does
   * not answer to, another origin, no key or a wrong one, in that order.
   */
  check(req: Request, address: string): Caller | Refusal {
    const wrongHost = hostRefusal(req, this.#hosts);
    if (wrongHost) return wrongHost;
    const crossOrigin = this.#crossOrigin(req);
    if (crossOrigin) return { status: 403, message: crossOrigin, code: "cross_origin", headers: {} };
    if (this.#keys.length === 0) return { client: address, key: "" };
    const key = keyIndex(req, this.#keys);
    if (key < 0) {
      return {
        status: 401,
        message: `This server needs a key: send the header Authorization: Bearer KEY, with the key the server was ` +
          `started with (${this.#o.keyFlag} KEY, or ${this.#o.keyEnv}).`,
        code: "invalid_api_key",
        headers: { "www-authenticate": "Bearer" },
      };
    }
    return { client: this.#keys.length > 1 ? `${address} key ${key}` : address, key: String(key) };
  }

  /** The warning a server bound beyond loopback prints once it listens on `port`; undefined on loopback. */
  bindWarning(port: number, what: string): string | undefined {
    if (isLoopback(this.#o.hostname)) return undefined;
    return `warning: ${this.#o.title} is bound to ${this.#o.hostname}, beyond loopback, so it accepts ${what} from ` +
      `the network: anyone who can reach port ${port} and holds the key can use it, and the key travels ` +
      `unencrypted over HTTP. Bind 127.0.0.1 (the default) unless that is what you want.`;
  }

  #crossOrigin(req: Request): string | undefined {
    const own = this.#o.origin?.() ?? "";
    const origin = req.headers.get("origin");
    if (origin !== null && origin !== own) {
      return `Cross-origin request refused: Origin ${origin} is not this server's ${own}.`;
    }
    const site = req.headers.get("sec-fetch-site");
    if (site === "cross-site" || site === "same-site") {
      return `Cross-origin request refused: Sec-Fetch-Site is ${site}.`;
    }
    return undefined;
  }
}

/**
 * The index of the key a request carries as `Authorization: Bearer KEY`, or -1. Both sides are hashed with SHA-256
 * and compared with `timingSafeEqual`, so every comparison is of 32 bytes whatever the guess's length, and the time
 * taken tells nothing about how much of a guess was right. Every key is compared, the first match kept.
 */
export function keyIndex(req: Request, keys: readonly string[]): number {
  const got = digest(/^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "")?.[1] ?? "");
  let found = -1;
  keys.forEach((k, i) => {
    if (timingSafeEqual(digest(k), got) && found < 0) found = i;
  });
  return found;
}

function digest(text: string): Uint8Array {
  return createHash("sha256").update(text).digest();
}

/**
 * What each client holds (environments, requests in flight), for per-client quotas.
 *
 * @example
 * ```ts
 * const held = new ClientCounts();
 * if (held.count("10.0.0.7") < 4) held.add("10.0.0.7");
 * held.remove("10.0.0.7");
 * ```
 */
export class ClientCounts {
  readonly #n = new Map<string, number>();

  /** What `client` holds now. */
  count(client: string): number {
    return this.#n.get(client) ?? 0;
  }

  /** One more for `client`. */
  add(client: string): void {
    this.#n.set(client, this.count(client) + 1);
  }

  /** One fewer for `client` (never below 0; a client at 0 is forgotten). */
  remove(client: string): void {
    const n = this.count(client) - 1;
    if (n > 0) this.#n.set(client, n);
    else this.#n.delete(client);
  }
}
