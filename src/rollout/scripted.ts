/**
 * A scripted policy: replies with given texts instead of sampling, through the same rollout loop as the model.
 * Oracle episodes made this way become supervised data with exactly the token layout RL trains on.
 */
import type { DecodeLimits, Generation } from "../model/generate.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { Sampler } from "./agent.ts";

/** Replies per episode, looked up by the episode's seed; once a script runs out, `fallback` is said. */
export class ScriptedSampler implements Sampler {
  readonly options: { slots: number };
  #scripts = new Map<number, string[]>();
  #next = 0;

  constructor(
    readonly tokenizer: Tokenizer,
    readonly scripts: (seed: number) => string[],
    readonly stopId: number,
    o: { slots?: number; fallback?: string } = {},
  ) {
    this.options = { slots: o.slots ?? 64 };
    this.fallback = o.fallback ?? "";
  }

  readonly fallback: string;

  open(_prompt: readonly number[], seed: number): number {
    const id = this.#next++;
    this.#scripts.set(id, [...this.scripts(seed)]);
    return id;
  }

  append(): void {}

  decode(seqs: readonly number[], limits: readonly DecodeLimits[]): Promise<Generation[]> {
    return Promise.resolve(seqs.map((seq, n) => {
      const text = this.#scripts.get(seq)?.shift() ?? this.fallback;
      const all = [...this.tokenizer.encode(text), this.stopId];
      const ids = all.slice(0, limits[n].maxNewTokens);
      return { ids, logprobs: ids.map(() => 0), finish: ids.length === all.length ? "stop" : "max_tokens" };
    }));
  }

  close(seq: number): void {
    this.#scripts.delete(seq);
  }
}
