/**
 * The live environments of one game server, by id. Ids are drawn from `crypto.getRandomValues` in [0, 2^53), so
 * they stay safe JSON integers (upstream's clients treat ids as ints) but cannot be guessed from one another, and a
 * restarted server does not hand out the ids of its earlier run (two draws collide with probability 2^-53). Entries
 * are kept in order of last use, so reaping the ones idle longer than `idleMs` walks from the front and stops at the
 * first fresh one: O(1) per request, amortized. Reaping runs on every lookup and insertion rather than on a timer, so
 * an environment idle past the limit is gone for every later request, and a server that gets no requests holds no
 * timer. Touching an environment cannot keep it forever: one older than `maxAgeMs` is reaped however recently it was
 * used (a second map in order of creation, walked the same way). Each entry has an owner (the client that created
 * it), and the table counts live entries per owner (access.ts's ClientCounts, as every server's quota does) so that
 * the server can hold every client to a quota. Each entry also belongs to the key its client called with: a lookup
 * with another key finds nothing, as for an id never made, so a client that learns another's id can neither read,
 * step nor close that environment.
 *
 * @example
 * ```ts
 * const table = new EnvTable<string>({ idleMs: 30 * 60_000 });
 * const id = table.add("state");
 * console.log(table.get(id)); // "state"
 * ```
 */

import { type Caller, ClientCounts } from "./access.ts";

/** Settings of a table. */
export interface EnvTableOptions {
  /** An entry not looked up for this long is dropped; 0 or Infinity never drops one. */
  idleMs: number;
  /** An entry older than this is dropped however recently it was used; 0 or Infinity never. Default Infinity. */
  maxAgeMs?: number;
  /** The clock, in milliseconds (tests). Default `performance.now`. */
  now?: () => number;
}

interface Entry<T> {
  value: T;
  touched: number;
  born: number;
  owner: string;
  /** The key its client called with (access.ts Caller.key). */
  key: string;
}

/** Environments by unguessable id, reaped when idle. */
export class EnvTable<T> {
  readonly #entries = new Map<bigint, Entry<T>>();
  /** The same entries in order of creation. */
  readonly #byAge = new Map<bigint, Entry<T>>();
  readonly #owned = new ClientCounts();
  readonly #idleMs: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;

  /** A table dropping entries idle for `options.idleMs`; throws RangeError on a negative or NaN limit. */
  constructor(options: EnvTableOptions) {
    if (!(options.idleMs >= 0)) throw new RangeError(`The idle limit must be >= 0 ms, got ${options.idleMs}`);
    this.#idleMs = options.idleMs === 0 ? Infinity : options.idleMs;
    const age = options.maxAgeMs ?? Infinity;
    if (!(age >= 0)) throw new RangeError(`The age limit must be >= 0 ms, got ${age}`);
    this.#maxAgeMs = age === 0 ? Infinity : age;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Live entries, after reaping the idle ones. */
  get size(): number {
    this.reap();
    return this.#entries.size;
  }

  /** Live entries of `owner`, after reaping. */
  owned(owner: string): number {
    this.reap();
    return this.#owned.count(owner);
  }

  /**
   * Stores `value` under a fresh random id for `owner` (a client's name, default "", or a Caller: its client and
   * key) and returns the id.
   */
  add(value: T, owner: string | Caller = ""): bigint {
    this.reap();
    let id = randomId();
    while (this.#entries.has(id)) id = randomId();
    const { client, key } = typeof owner === "string" ? { client: owner, key: "" } : owner;
    const now = this.#now(), entry = { value, touched: now, born: now, owner: client, key };
    this.#entries.set(id, entry);
    this.#byAge.set(id, entry);
    this.#owned.add(client);
    return id;
  }

  /**
   * The entry of `id`, marked as used now; undefined when it was never added, was deleted or was reaped, or, with
   * `key`, when it belongs to another key.
   */
  get(id: bigint, key?: string): T | undefined {
    this.reap();
    const entry = this.#entries.get(id);
    if (!entry || (key !== undefined && entry.key !== key)) return undefined;
    // Delete and set again to move it to the back, keeping the map in order of last use.
    this.#entries.delete(id);
    entry.touched = this.#now();
    this.#entries.set(id, entry);
    return entry.value;
  }

  /** Removes `id`; false when it was not live, or, with `key`, belongs to another key. */
  delete(id: bigint, key?: string): boolean {
    this.reap();
    const entry = this.#entries.get(id);
    if (!entry || (key !== undefined && entry.key !== key)) return false;
    return this.#drop(id);
  }

  /** Drops every entry idle for `idleMs` or longer, or older than `maxAgeMs`; returns how many. */
  reap(): number {
    const now = this.#now(), idle = now - this.#idleMs, old = now - this.#maxAgeMs;
    let dropped = 0;
    for (const [id, entry] of this.#entries) {
      if (entry.touched > idle) break;
      dropped += this.#drop(id) ? 1 : 0;
    }
    for (const [id, entry] of this.#byAge) {
      if (entry.born > old) break;
      dropped += this.#drop(id) ? 1 : 0;
    }
    return dropped;
  }

  #drop(id: bigint): boolean {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    this.#entries.delete(id);
    this.#byAge.delete(id);
    this.#owned.remove(entry.owner);
    return true;
  }
}

/** A uniformly random integer in [0, 2^53) from the platform's cryptographic generator. */
export function randomId(): bigint {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return (BigInt(hi & 0x1f_ffff) << 32n) | BigInt(lo);
}
