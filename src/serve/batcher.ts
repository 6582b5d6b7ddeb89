/**
 * Continuous batching over Crucible's KV-cached sampler for a server: requests arriving at any time join the running
 * batch at the next block, and every request with the same sampling settings advances in one `Generator.advance`
 * call (one submit and one readback per block of `blockSteps` tokens for all of them). A request waits for a cache
 * slot when all are busy, and leaves the batch as soon as its own turn ends (a stop id, a stop string, its token
 * budget, a full slot, or its caller cancelling), freeing its slot for the next one.
 */
import type { DecodeLimits, FinishReason } from "../model/generate.ts";
import type { SampleSettings } from "../ops/sample.ts";
import type { Sampler } from "../rollout/agent.ts";

/** One completion to sample. */
export interface BatchRequest {
  prompt: readonly number[];
  maxTokens: number;
  stopIds: readonly number[];
  settings: SampleSettings;
  seed: number;
  /**
   * Told each block's new ids. Returning true ends the request there ("stop": its caller found a stop string);
   * `finish` is set on the last call.
   */
  onTokens(ids: number[], finish?: FinishReason | "cancelled"): boolean | void;
  /** Polled between blocks: true drops the request (a client that went away). */
  cancelled?(): boolean;
}

interface Live {
  req: BatchRequest;
  seq: number;
  produced: number;
  done: () => void;
  fail: (e: unknown) => void;
}

/** Batch sizes seen, so tests and logs can tell requests really shared decodes. */
export interface BatchStats {
  blocks: number;
  largestBatch: number;
  requests: number;
  /** Requests dropped because their caller went away. */
  cancelled: number;
}

/** Feeds concurrent requests to one sampler. */
export class DecodeBatcher {
  readonly stats: BatchStats = { blocks: 0, largestBatch: 0, requests: 0, cancelled: 0 };
  #waiting: { req: BatchRequest; done: () => void; fail: (e: unknown) => void }[] = [];
  #live: Live[] = [];
  #running = false;

  constructor(readonly sampler: Sampler & Required<Pick<Sampler, "advance">>) {}

  /** Requests decoding or waiting for a slot. */
  get active(): number {
    return this.#live.length + this.#waiting.length;
  }

  /** Samples one request; resolves when it has finished (its tokens went to `onTokens`). */
  run(req: BatchRequest): Promise<void> {
    this.stats.requests++;
    return new Promise((done, fail) => {
      this.#waiting.push({ req, done, fail });
      if (!this.#running) this.#pump().catch((e) => this.#failAll(e));
    });
  }

  async #pump(): Promise<void> {
    this.#running = true;
    try {
      while (this.#waiting.length > 0 || this.#live.length > 0) {
        this.#admit();
        this.#live = this.#live.filter((l) => {
          if (!l.req.cancelled?.()) return true;
          this.stats.cancelled++;
          this.#finish(l, "cancelled");
          return false;
        });
        // Requests with equal sampling settings share a block; other settings get blocks of their own.
        const groups = new Map<string, Live[]>();
        for (const l of this.#live) {
          const s = l.req.settings, key = `${s.temperature ?? 1} ${s.topK ?? 0} ${s.topP ?? 1}`;
          (groups.get(key) ?? groups.set(key, []).get(key)!).push(l);
        }
        for (const group of groups.values()) await this.#advance(group);
        // Let requests that arrived during the block's readback join the next one.
        await new Promise((r) => setTimeout(r, 0));
      }
    } finally {
      this.#running = false;
    }
  }

  #admit(): void {
    const free = this.sampler.options.slots - this.#live.length;
    for (const w of this.#waiting.splice(0, Math.max(0, free))) {
      try {
        const seq = this.sampler.open(w.req.prompt, w.req.seed);
        this.#live.push({ req: w.req, seq, produced: 0, done: w.done, fail: w.fail });
      } catch (e) {
        w.fail(e);
      }
    }
  }

  async #advance(group: Live[]): Promise<void> {
    const limits: DecodeLimits[] = group.map((l) => ({
      maxNewTokens: l.req.maxTokens - l.produced,
      stopIds: l.req.stopIds,
    }));
    this.stats.blocks++;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, group.length);
    const pieces = await this.sampler.advance(group.map((l) => l.seq), limits, group[0].req.settings);
    group.forEach((l, i) => {
      const p = pieces[i];
      l.produced += p.ids.length;
      let ended = false;
      try {
        ended = l.req.onTokens(p.ids, p.finish) === true;
      } catch (e) {
        this.#drop(l);
        l.fail(e);
        return;
      }
      if (p.finish) this.#finish(l);
      else if (ended) this.#finish(l, "stop");
    });
  }

  #finish(l: Live, why?: FinishReason | "cancelled"): void {
    this.#drop(l);
    if (why) {
      try {
        l.req.onTokens([], why);
      } catch {
        // the request already ended for its caller
      }
    }
    l.done();
  }

  #drop(l: Live): void {
    this.sampler.close(l.seq);
    this.#live = this.#live.filter((x) => x !== l);
  }

  #failAll(e: unknown): void {
    for (const l of this.#live) (this.sampler.close(l.seq), l.fail(e));
    for (const w of this.#waiting) w.fail(e);
    this.#live = [];
    this.#waiting = [];
  }
}
