/**
 * A scripted policy: replies with given texts instead of sampling, through the same rollout loop as the model.
 * Oracle episodes made this way become supervised data with exactly the token layout RL trains on.
 */
import type { DecodeLimits, Generation } from "../model/generate.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { Sampler } from "./agent.ts";

/** Replies per episode, looked up by the episode's seed; once a script runs out, `fallback` is said. */
export class ScriptedSampler implements Sampler {
  /** How many sequences it holds at once (default 64). */
  readonly options: { slots: number };
  #scripts = new Map<number, string[]>();
  #next = 0;

  /** Replies by episode seed from `scripts`, each ended by `stopId`; `o.fallback` once a script runs out. */
  constructor(
    readonly tokenizer: Tokenizer,
    readonly scripts: (seed: number) => string[],
    readonly stopId: number,
    o: { slots?: number; fallback?: string } = {},
  ) {
    this.options = { slots: o.slots ?? 64 };
    this.fallback = o.fallback ?? "";
  }

  /** What it says once an episode's script runs out. */
  readonly fallback: string;

  /** Opens a sequence whose replies are `scripts(seed)`. */
  open(_prompt: readonly number[], seed: number): number {
    const id = this.#next++;
    this.#scripts.set(id, [...this.scripts(seed)]);
    return id;
  }

  /** Observations are not read: the script decides. */
  append(): void {}

  /** Each sequence's next scripted reply, as its tokens with log-probability 0, cut at the limit. */
  decode(seqs: readonly number[], limits: readonly DecodeLimits[]): Promise<Generation[]> {
    return Promise.resolve(seqs.map((seq, n) => {
      const text = this.#scripts.get(seq)?.shift() ?? this.fallback;
      const all = [...this.tokenizer.encode(text), this.stopId];
      const ids = all.slice(0, limits[n].maxNewTokens);
      return { ids, logprobs: ids.map(() => 0), finish: ids.length === all.length ? "stop" : "max_tokens" };
    }));
  }

  /** Forgets a sequence's script. */
  close(seq: number): void {
    this.#scripts.delete(seq);
  }
}
