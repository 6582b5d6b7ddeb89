/**
 * The second engine: generation through an onnxruntime session over an exported decoder (`decoder.ts`), behind
 * the same Sampler interface as the WGSL Generator, so `runRollouts` and `evaluate` play with either. Each sequence
 * keeps its own past keys and values ([1, KV, P, D] per layer, as the session returned them) and is run on its own:
 * batch 1, one session call per sampled token, the pending tokens (prompt, an environment's reply) in one call.
 * Platform-neutral: the same code runs in Deno and in the play page's browser.
 */
import type { ModelConfig } from "../model/config.ts";
import type { DecodeLimits, Generation } from "../model/generate.ts";
import type { SampleSettings } from "../ops/sample.ts";
import { Rng } from "../util/random.ts";
import { cacheNames } from "./decoder.ts";
import { pickToken } from "./pick.ts";
import type { OrtModule, OrtSession, OrtTensor } from "./runtime.ts";

interface Seq {
  /** Tokens whose keys and values are in `past`. */
  length: number;
  pending: number[];
  past: Record<string, OrtTensor>;
  rng: Rng;
}

/** Options of an {@linkcode OnnxSampler}. */
export interface OnnxSamplerOptions {
  /** Sequences the rollout loop may hold at once (they run one after another). */
  slots: number;
  /** Longest history a sequence may reach. */
  maxLen: number;
}

/** A Sampler over an onnxruntime session. */
export class OnnxSampler {
  /** Time and tokens spent so far, as the Generator counts them. */
  readonly timing = { prefillSeconds: 0, decodeSeconds: 0, prefillTokens: 0, decodeTokens: 0 };
  readonly #seqs = new Map<number, Seq>();
  #next = 0;

  constructor(
    readonly ort: Pick<OrtModule, "Tensor">,
    readonly session: OrtSession,
    readonly config: ModelConfig,
    readonly options: OnnxSamplerOptions,
  ) {}

  /** Starts a sequence from prompt ids; `seed` makes its samples replay exactly. */
  open(prompt: readonly number[], seed: number): number {
    if (prompt.length === 0) throw new RangeError("A sequence needs at least one prompt token");
    if (this.#seqs.size >= this.options.slots) {
      throw new RangeError(`All ${this.options.slots} sampler slots are in use; close one first`);
    }
    const id = this.#next++;
    this.#seqs.set(id, { length: 0, pending: [...prompt], past: this.#emptyPast(), rng: new Rng(seed) });
    return id;
  }

  /** Appends tokens to run before the next sampled token. */
  append(seq: number, ids: readonly number[]): void {
    this.#state(seq).pending.push(...ids);
  }

  /** Frees a sequence. */
  close(seq: number): void {
    this.#state(seq);
    this.#seqs.delete(seq);
  }

  /** Samples a continuation of each sequence until its stop id, its token budget, or maxLen. */
  async decode(
    seqs: readonly number[],
    limits: readonly DecodeLimits[],
    settings: SampleSettings = {},
  ): Promise<Generation[]> {
    const out: Generation[] = [];
    for (const [i, seq] of seqs.entries()) out.push(await this.#continue(this.#state(seq), limits[i], settings));
    return out;
  }

  /**
   * Logits [T, V] of running `ids` after the sequence's history, which then holds them. For tests and the page;
   * `decode` is the way to generate.
   */
  async step(seq: number, ids: readonly number[]): Promise<Float32Array> {
    const s = this.#state(seq);
    return await this.#run(s, [...s.pending.splice(0), ...ids]);
  }

  async #continue(s: Seq, lim: DecodeLimits, settings: SampleSettings): Promise<Generation> {
    const g: Generation = { ids: [], logprobs: [], finish: "max_tokens" };
    if (s.pending.length === 0) throw new RangeError("A sequence has nothing to continue from");
    while (g.ids.length < lim.maxNewTokens) {
      if (s.length + s.pending.length >= this.options.maxLen) {
        g.finish = "length";
        break;
      }
      const t0 = performance.now(), n = s.pending.length;
      const logits = await this.#run(s, s.pending);
      const seconds = (performance.now() - t0) / 1000;
      if (n > 1) {
        this.timing.prefillSeconds += seconds;
        this.timing.prefillTokens += n;
      } else {
        this.timing.decodeSeconds += seconds;
        this.timing.decodeTokens += 1;
      }
      const V = this.config.vocabSize;
      const u = settings.temperature === 0 ? 0 : s.rng.float();
      const { id, logprob } = pickToken(logits.subarray(logits.length - V), settings, u);
      g.ids.push(id);
      g.logprobs.push(logprob);
      s.pending = [id];
      if (lim.stopIds.includes(id)) {
        g.finish = "stop";
        break;
      }
    }
    return g;
  }

  /** Runs `ids` at the end of the sequence's history; returns the logits [T, V] and keeps the new cache. */
  async #run(s: Seq, ids: readonly number[]): Promise<Float32Array> {
    const T = ids.length, total = s.length + T;
    const { Tensor } = this.ort;
    const feeds: Record<string, OrtTensor> = {
      input_ids: new Tensor("int64", BigInt64Array.from(ids, (v) => BigInt(v)), [1, T]),
      attention_mask: new Tensor("int64", new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: new Tensor("int64", BigInt64Array.from({ length: T }, (_, j) => BigInt(s.length + j)), [1, T]),
      ...s.past,
    };
    const out = await this.session.run(feeds);
    const past: Record<string, OrtTensor> = {};
    for (let l = 0; l < this.config.numLayers; l++) {
      const n = cacheNames(l);
      past[n.pastKey] = out[n.presentKey];
      past[n.pastValue] = out[n.presentValue];
    }
    s.past = past;
    s.length = total;
    s.pending = [];
    return out.logits.data as Float32Array;
  }

  #emptyPast(): Record<string, OrtTensor> {
    const c = this.config, past: Record<string, OrtTensor> = {};
    for (let l = 0; l < c.numLayers; l++) {
      const n = cacheNames(l), dims = [1, c.numKvHeads, 0, c.headDim];
      past[n.pastKey] = new this.ort.Tensor("float32", new Float32Array(0), dims);
      past[n.pastValue] = new this.ort.Tensor("float32", new Float32Array(0), dims);
    }
    return past;
  }

  #state(seq: number): Seq {
    const s = this.#seqs.get(seq);
    if (!s) throw new RangeError(`No open sequence ${seq}`);
    return s;
  }
}
