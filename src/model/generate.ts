/**
 * Batched generation with a KV cache. Sequences live in cache slots; each has tokens in the cache and pending
 * tokens not yet run (the prompt, an environment's reply, the last sampled token). `decode` prefills every
 * pending token, then samples up to `blockSteps` tokens per sequence per submit, reading ids and log-probs back
 * once per block: never one GPU round trip per token per sequence.
 *
 * Tokens sampled after a sequence stops (its stop id, its token budget) are computed but discarded; their cache
 * rows lie past the sequence's length and are overwritten when it continues.
 */
import { Batch } from "../gpu/batch.ts";
import { Rng } from "../util/random.ts";
import { empty, fromHost, type Tensor } from "../gpu/tensor.ts";
import { drawUniforms, sample, type SampleSettings } from "../ops/sample.ts";
import { cacheDtype, type CacheSetting, inferForward, inferPrefill, type InferTokens, KvCache } from "./infer.ts";
import type { Transformer } from "./transformer.ts";
import type { DecoderPlan } from "./plan.ts";

/** Why a sequence stopped generating. */
export type FinishReason = "stop" | "max_tokens" | "length";

/** What one sequence produced in one `decode` call. */
export interface Generation {
  /** The sampled ids, the stop id included when one ended the turn. */
  ids: number[];
  /** Log-probability of each sampled id under softmax(logits / temperature) (temperature 1 when greedy). */
  logprobs: number[];
  /** Why it stopped: a stop id, the call's max_tokens, or the sequence's room in the cache. */
  finish: FinishReason;
}

/** What one sequence sampled in one block of decoding; `finish` is set when its turn ended there. */
export interface DecodePiece {
  /** The ids sampled in the block. */
  ids: number[];
  /** Each one's log-probability, as Generation's. */
  logprobs: number[];
  /** Why the turn ended in this block, if it did. */
  finish?: FinishReason;
}

/** Per-call sampling limits of one sequence. */
export interface DecodeLimits {
  /** The most tokens this call may add to the sequence. */
  maxNewTokens: number;
  /** Ids that end the turn (kept as its last token). */
  stopIds: readonly number[];
}

/**
 * The most tokens one prefill submit runs: its widest activation (a row of the MLP's I, the attention's H·D or the
 * hidden C, f32) times the tokens must stay within the GPU's tensor limit (a storage binding: 128 MiB on lavapipe).
 */
export function prefillTokenLimit(plan: DecoderPlan, tensorLimit: number): number {
  const widest = 4 * Math.max(plan.intermediate, plan.heads * plan.headDim, plan.hidden);
  return Math.max(1, Math.floor(tensorLimit / widest));
}

interface SeqState {
  slot: number;
  /** Tokens whose keys and values are in the cache. */
  length: number;
  pending: number[];
  rng: Rng;
}

/** Options of a {@linkcode Generator}. */
export interface GeneratorOptions {
  /** Sequences held at once. */
  slots: number;
  /** Cache rows per sequence: the longest history a sequence may reach. */
  maxLen: number;
  /** The KV cache's element type (default f32; auto: f16 where the adapter has shader-f16). */
  cache?: CacheSetting;
  /** Decode steps per submit (and per readback). */
  blockSteps?: number;
  /** The most tokens one prefill submit runs (default and upper bound: {@linkcode prefillTokenLimit}). */
  prefillTokens?: number;
}

/** Holds sequences in a KV cache and samples continuations of many at once. */
export class Generator {
  /**
   * The KV cache the sequences live in (src/model/infer.ts), the generator's own.
   *
   * @ignore
   */
  readonly cache: KvCache;
  /** Decode steps per GPU submit (one readback per block). */
  readonly blockSteps: number;
  /**
   * Time and tokens spent so far: prefill (the prompt and environment replies entering the cache, submitted and
   * timed on their own, in prefillSubmits submits) and decode (sampling, blockSteps tokens per sequence per block).
   * Callers take differences.
   */
  readonly timing = { prefillSeconds: 0, decodeSeconds: 0, prefillTokens: 0, prefillSubmits: 0, decodeTokens: 0 };
  #seqs = new Map<number, SeqState>();
  #free: number[];
  #next = 0;

  /** A generator over `model` with a KV cache of `options.slots` sequences of `options.maxLen` tokens. */
  constructor(readonly model: Transformer, readonly options: GeneratorOptions) {
    if (options.maxLen > model.config.maxPositions) {
      throw new RangeError(`maxLen ${options.maxLen} exceeds the model's ${model.config.maxPositions} positions`);
    }
    this.cache = new KvCache(
      model.gpu,
      model,
      options.slots,
      options.maxLen,
      cacheDtype(model.gpu, options.cache ?? "f32"),
    );
    this.blockSteps = options.blockSteps ?? 8;
    this.#free = Array.from({ length: options.slots }, (_, i) => options.slots - 1 - i);
  }

  /** Starts a sequence from prompt ids; `seed` makes its samples replay exactly. Returns its handle. */
  open(prompt: readonly number[], seed: number): number {
    if (prompt.length === 0) throw new RangeError("A sequence needs at least one prompt token");
    const slot = this.#free.pop();
    if (slot === undefined) {
      throw new RangeError(`All ${this.options.slots} generator slots are in use; close one first`);
    }
    const id = this.#next++;
    this.#seqs.set(id, { slot, length: 0, pending: [...prompt], rng: new Rng(seed) });
    return id;
  }

  /** Appends tokens (an environment's reply) to run before the next sampled token. */
  append(seq: number, ids: readonly number[]): void {
    this.#state(seq).pending.push(...ids);
  }

  /** Tokens a sequence holds (in the cache and pending). */
  length(seq: number): number {
    const s = this.#state(seq);
    return s.length + s.pending.length;
  }

  /** Frees a sequence's slot. */
  close(seq: number): void {
    const s = this.#state(seq);
    this.#seqs.delete(seq);
    this.#free.push(s.slot);
  }

  /** Samples a continuation of each sequence until its stop id, its token budget, or its cache slot is full. */
  async decode(
    seqs: readonly number[],
    limits: readonly DecodeLimits[],
    settings: SampleSettings = {},
  ): Promise<Generation[]> {
    const out: Generation[] = seqs.map(() => ({ ids: [], logprobs: [], finish: "max_tokens" }));
    let active = seqs.map((_, i) => i);
    while (active.length > 0) {
      const left = active.map((i) => ({ ...limits[i], maxNewTokens: limits[i].maxNewTokens - out[i].ids.length }));
      const pieces = await this.advance(active.map((i) => seqs[i]), left, settings);
      active = active.filter((i, n) => {
        const p = pieces[n];
        out[i].ids.push(...p.ids);
        out[i].logprobs.push(...p.logprobs);
        if (p.finish) out[i].finish = p.finish;
        return !p.finish;
      });
    }
    return out;
  }

  /**
   * One block of {@linkcode decode}: prefills what each sequence has pending and samples up to blockSteps + 1
   * tokens, one submit and one readback. A piece without `finish` is a turn that goes on (its last token is pending:
   * call again with the budget left); the others ended in this block. Lets a caller move each sequence on as soon as
   * its own turn ends, instead of waiting for the slowest of a batch.
   */
  async advance(
    seqs: readonly number[],
    limits: readonly DecodeLimits[],
    settings: SampleSettings = {},
  ): Promise<DecodePiece[]> {
    const out: DecodePiece[] = seqs.map(() => ({ ids: [], logprobs: [] }));
    const run: number[] = [];
    seqs.forEach((seq, i) => {
      const s = this.#state(seq);
      if (s.pending.length === 0) throw new RangeError(`Sequence ${seq} has nothing to continue from`);
      if (limits[i].maxNewTokens <= 0) out[i].finish = "max_tokens";
      else if (s.length + s.pending.length >= this.options.maxLen) out[i].finish = "length";
      else run.push(i);
    });
    if (run.length === 0) return out;
    const states = run.map((i) => this.#state(seqs[i]));
    const { ids, logprobs } = await this.#block(states, settings);
    run.forEach((i, n) => this.#accept(states[n], out[i], limits[i], ids[n], logprobs[n]));
    return out;
  }

  /**
   * Prefills pending tokens and samples blockSteps + 1 tokens for each state: one submit and one readback, plus a
   * submit of its own (timed as prefill) when some state has more than one token pending (a prompt or an
   * environment's reply). That prefill runs every pending token but the last of those states alone, so the block
   * itself is one query per sequence, the shape decoding kernels are picked for, whatever mix of states it holds.
   */
  async #block(states: SeqState[], settings: SampleSettings) {
    const gpu = this.model.gpu, maxLen = this.options.maxLen;
    const filling = states.filter((s) => s.pending.length > 1);
    if (filling.length > 0) {
      const t0 = performance.now();
      const all = { ids: [] as number[], pos: [] as number[], rows: [] as number[], start: [] as number[] };
      for (const s of filling) {
        for (let j = 0; j < s.pending.length - 1; j++) {
          all.ids.push(s.pending[j]);
          all.pos.push(s.length + j);
          all.rows.push(s.slot * maxLen + s.length + j);
          all.start.push(s.slot * maxLen);
        }
      }
      // In submits of at most prefillTokenLimit tokens, so no activation passes one binding (64 prompts of 1,400
      // tokens are 90,000 rows); a sequence cut between two reads the first part's keys and values from the cache.
      const most = Math.min(
        this.options.prefillTokens ?? Infinity,
        prefillTokenLimit(this.model.plan, gpu.tensorLimit),
      );
      for (let from = 0; from < all.ids.length; from += most) {
        const to = Math.min(all.ids.length, from + most);
        const batch = new Batch(gpu);
        inferPrefill(batch, this.cache, {
          ids: Uint32Array.from(all.ids.slice(from, to)),
          positions: Uint32Array.from(all.pos.slice(from, to)),
          rows: Uint32Array.from(all.rows.slice(from, to)),
          kvStart: Uint32Array.from(all.start.slice(from, to)),
          kvEnd: Uint32Array.from(all.rows.slice(from, to), (r) => r + 1),
        });
        await batch.submit();
        this.timing.prefillSubmits++;
      }
      await gpu.device.queue.onSubmittedWorkDone();
      for (const s of filling) {
        s.length += s.pending.length - 1;
        s.pending = s.pending.slice(-1);
      }
      this.timing.prefillSeconds += (performance.now() - t0) / 1000;
      this.timing.prefillTokens += all.ids.length;
    }
    // Every state now has one pending token: the block's first forward is a decode step like the others.
    const t0 = performance.now();
    const batch = new Batch(gpu);
    const at = states.map((s) => s.length);
    const logits = inferForward(batch, this.cache, this.#step(states, at, states.map((s) => s.pending[0])));
    const lengths = at.map((p) => p + 1);
    return this.#sample(states, settings, logits, lengths, t0, batch);
  }

  /** Samples blockSteps tokens per state after the forward that made `logits`; one submit, one readback. */
  async #sample(
    states: SeqState[],
    settings: SampleSettings,
    first: Tensor,
    lengths: number[],
    t0: number,
    open?: Batch,
  ) {
    const gpu = this.model.gpu, N = states.length, steps = this.blockSteps;
    const batch = open ?? new Batch(gpu);
    const sampled: Tensor[] = [], logps: Tensor[] = [], host: Tensor[] = [];
    let logits = first;
    for (let k = 0; k <= steps; k++) {
      const ids = empty(gpu, [N], "u32", "sampled", true), logprob = empty(gpu, [N], "f32", "logprob", true);
      const u = fromHost(gpu, drawUniformsPer(states), [N]);
      host.push(u);
      sample(batch, { ...settings, logits, uniform: u, ids, logprob });
      logits.release();
      sampled.push(ids);
      logps.push(logprob);
      if (k === steps) break;
      // Decode step k: the sampled token (on the GPU) enters at position lengths[n].
      logits = inferForward(batch, this.cache, this.#step(states, lengths), ids);
      for (let n = 0; n < N; n++) lengths[n]++;
    }
    const read = await batch.read([...sampled, ...logps]);
    for (const t of [...sampled, ...logps, ...host]) t.release();
    states.forEach((s) => {
      s.length += s.pending.length;
      s.pending = [];
    });
    this.timing.decodeSeconds += (performance.now() - t0) / 1000;
    this.timing.decodeTokens += N * steps;
    return {
      ids: states.map((_, n) => sampled.map((__, k) => read[k][n])),
      logprobs: states.map((_, n) => logps.map((__, k) => read[steps + 1 + k][n])),
    };
  }

  /**
   * One new token per state, at position at[n] of its slot (parked past the cache when the slot is full), with its
   * id from the host or, without `ids`, from a GPU tensor given to inferForward.
   */
  #step(states: SeqState[], at: readonly number[], ids?: readonly number[]): InferTokens {
    const maxLen = this.options.maxLen, N = states.length;
    return {
      ids: ids ? Uint32Array.from(ids) : new Uint32Array(N),
      positions: Uint32Array.from(at, (p) => Math.min(p, maxLen - 1)),
      rows: Uint32Array.from(states, (s, n) => at[n] < maxLen ? s.slot * maxLen + at[n] : this.cache.rows),
      kvStart: Uint32Array.from(states, (s) => s.slot * maxLen),
      kvEnd: Uint32Array.from(states, (s, n) => s.slot * maxLen + Math.min(at[n] + 1, maxLen)),
      select: Uint32Array.from({ length: N }, (_, n) => n),
    };
  }

  /** Takes a block's samples into a piece, setting its finish when the sequence's turn ended. */
  #accept(s: SeqState, g: DecodePiece, lim: DecodeLimits, ids: number[], logprobs: number[]): void {
    for (let k = 0; k < ids.length; k++) {
      g.ids.push(ids[k]);
      g.logprobs.push(logprobs[k]);
      const stopped = lim.stopIds.includes(ids[k]);
      const full = g.ids.length >= lim.maxNewTokens;
      // The cache holds every token before the newest one; the newest waits as the next input.
      const length = s.length + k;
      const slotFull = length + 1 >= this.options.maxLen;
      if (stopped || full || slotFull || k === ids.length - 1) {
        s.length = length;
        s.pending = [ids[k]];
        if (stopped) g.finish = "stop";
        else if (full) g.finish = "max_tokens";
        else if (slotFull) g.finish = "length";
        return;
      }
    }
  }

  #state(seq: number): SeqState {
    const s = this.#seqs.get(seq);
    if (!s) throw new RangeError(`No open sequence ${seq}`);
    return s;
  }

  /** Frees the KV cache. */
  release(): void {
    this.cache.release();
  }
}

/** One uniform per sequence from its own generator, so a sequence's samples do not depend on its batch-mates. */
function drawUniformsPer(states: SeqState[]): Float32Array {
  return Float32Array.from(states, (s) => drawUniforms(s.rng, 1)[0]);
}
