/**
 * The live environments of one TextCraft server, by id. Ids are drawn from `crypto.getRandomValues` in [0, 2^53), so
 * they stay safe JSON integers (upstream's clients treat ids as ints) but cannot be guessed from one another, and a
 * restarted server does not hand out the ids of its earlier run (two draws collide with probability 2^-53). Entries
 * are kept in order of last use, so reaping the ones idle longer than `idleMs` walks from the front and stops at the
 * first fresh one: O(1) per request, amortized. Reaping runs on every lookup and insertion rather than on a timer, so
 * an environment idle past the limit is gone for every later request, and a server that gets no requests holds no
 * timer.
 *
 * @example
 * ```ts
 * const table = new EnvTable<string>({ idleMs: 30 * 60_000 });
 * const id = table.add("state");
 * console.log(table.get(id)); // "state"
 * ```
 */

/** Settings of a table. */
export interface EnvTableOptions {
  /** An entry not looked up for this long is dropped; 0 or Infinity never drops one. */
  idleMs: number;
  /** The clock, in milliseconds (tests). Default `performance.now`. */
  now?: () => number;
}

interface Entry<T> {
  value: T;
  touched: number;
}

/** Environments by unguessable id, reaped when idle. */
export class EnvTable<T> {
  readonly #entries = new Map<bigint, Entry<T>>();
  readonly #idleMs: number;
  readonly #now: () => number;

  /** A table dropping entries idle for `options.idleMs`; throws RangeError on a negative or NaN limit. */
  constructor(options: EnvTableOptions) {
    if (!(options.idleMs >= 0)) throw new RangeError(`The idle limit must be >= 0 ms, got ${options.idleMs}`);
    this.#idleMs = options.idleMs === 0 ? Infinity : options.idleMs;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Live entries, after reaping the idle ones. */
  get size(): number {
    this.reap();
    return this.#entries.size;
  }

  /** Stores `value` under a fresh random id and returns the id. */
  add(value: T): bigint {
    this.reap();
    let id = randomId();
    while (this.#entries.has(id)) id = randomId();
    this.#entries.set(id, { value, touched: this.#now() });
    return id;
  }

  /** The entry of `id`, marked as used now; undefined when it was never added, was deleted or was reaped. */
  get(id: bigint): T | undefined {
    this.reap();
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    // Delete and set again to move it to the back, keeping the map in order of last use.
    this.#entries.delete(id);
    entry.touched = this.#now();
    this.#entries.set(id, entry);
    return entry.value;
  }

  /** Removes `id`; false when it was not live. */
  delete(id: bigint): boolean {
    this.reap();
    return this.#entries.delete(id);
  }

  /** Drops every entry idle for `idleMs` or longer; returns how many. */
  reap(): number {
    const cutoff = this.#now() - this.#idleMs;
    let dropped = 0;
    for (const [id, entry] of this.#entries) {
      if (entry.touched > cutoff) break;
      this.#entries.delete(id);
      dropped++;
    }
    return dropped;
  }
}

/** A uniformly random integer in [0, 2^53) from the platform's cryptographic generator. */
export function randomId(): bigint {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return (BigInt(hi & 0x1f_ffff) << 32n) | BigInt(lo);
}
