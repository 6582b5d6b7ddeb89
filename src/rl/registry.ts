/**
 * A table of algorithms by name, for one config key (verl's `register_adv_est` and `register_policy_loss`): each
 * entry names itself, says what it does and which config keys it reads. The config schema refuses a name no entry
 * has (naming those it has), `deno task config --explain KEY` and `--algorithms` list them, and the RL step looks its
 * algorithm up here, so adding one is one entry (one file and its line in the table, or a `register` call).
 */

/** What every registered algorithm says of itself. */
export interface Registered {
  /** The value of the config key that picks it, e.g. "grpo". */
  readonly name: string;
  /** One line: what it computes, and where it comes from. */
  readonly summary: string;
  /** The config keys it reads besides the one that picks it, by their full paths (e.g. "algorithm.gamma"). */
  readonly keys: readonly string[];
}

/**
 * The algorithms one config key picks from, in registration order.
 *
 * @example
 * ```ts
 * const losses = new Registry<Registered>("policy loss", "actor.policy_loss");
 * losses.register({ name: "vanilla", summary: "PPO's clipped surrogate", keys: ["actor.clip_ratio_low"] });
 * losses.get("vanilla").keys; // ["actor.clip_ratio_low"]
 * losses.get("gspo"); // RangeError: Unknown policy loss "gspo" (actor.policy_loss); registered: vanilla
 * ```
 */
export class Registry<T extends Registered> {
  readonly #entries = new Map<string, T>();

  /** A registry of `what` (e.g. "advantage estimator"), picked by the config key `key`. */
  constructor(readonly what: string, readonly key: string, entries: readonly T[] = []) {
    for (const e of entries) this.register(e);
  }

  /** Adds an entry; a name already taken is a RangeError (two algorithms may not answer to one name). */
  register(entry: T): T {
    if (!/^[a-z][a-z0-9_+-]*$/.test(entry.name)) {
      throw new RangeError(`A ${this.what}'s name must be lower-case letters, digits, _, + or -, got "${entry.name}"`);
    }
    if (this.#entries.has(entry.name)) throw new RangeError(`A ${this.what} named "${entry.name}" is registered`);
    this.#entries.set(entry.name, entry);
    return entry;
  }

  /** Removes the entry called `name` (a test's own); false when there was none. */
  unregister(name: string): boolean {
    return this.#entries.delete(name);
  }

  /** Whether `name` is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The entry called `name`; a RangeError naming the registered ones otherwise. */
  get(name: string): T {
    const e = this.#entries.get(name);
    if (!e) throw new RangeError(`Unknown ${this.what} "${name}" (${this.key}); ${this.known()}`);
    return e;
  }

  /** The registered names, in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** The registered entries, in registration order. */
  entries(): T[] {
    return [...this.#entries.values()];
  }

  /** "registered: a, b, c", for messages. */
  known(): string {
    return `registered: ${this.names().join(", ")}`;
  }
}
