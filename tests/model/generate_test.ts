// KV-cached inference against the full forward and the f64 reference: same logits for prefill, continuation
// chunks and single decode steps; greedy generation gives exact ids for one sequence and a batch of unequal prompts.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { Rng } from "../../src/util/random.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { FUSE_ENV } from "../../src/ops/gate_up_swiglu.ts";
import { Generator, prefillTokenLimit } from "../../src/model/generate.ts";
import { inferForward, KvCache } from "../../src/model/infer.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { paramTable } from "../../src/model/params.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { TensorSet } from "../../src/model/weights.ts";
import { assertClose } from "../reference/check.ts";
import { modelLogitsRef, type RefParams } from "../reference/model.ts";
import { noF16, noGpu, testGpu } from "../no_gpu.ts";

const CONFIG = parseModelConfig({
  model_type: "qwen2",
  vocab_size: 31,
  hidden_size: 16,
  intermediate_size: 20,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
  max_position_embeddings: 64,
});

function params(seed: number): RefParams {
  const rng = new Rng(seed);
  return new Map(
    paramTable(CONFIG).map((s) => {
      const n = s.shape.reduce((a, b) => a * b, 1);
      return [
        s.name,
        Float64Array.from({ length: n }, () => Math.fround((s.init === "ones" ? 1 : 0) + 0.5 * rng.normal())),
      ];
    }),
  );
}

async function setup() {
  const gpu = await testGpu();
  const ref = params(3);
  const weights = TensorSet.fromHost(gpu, CONFIG, new Map([...ref].map(([k, v]) => [k, Float32Array.from(v)])));
  return { gpu, ref, model: new Transformer(gpu, CONFIG, weights) };
}

const LOGITS = { atol: 2e-5, rtol: 1e-4 };

Deno.test({
  name: "KV-cached prefill, continuation and decode steps give the full forward's logits",
  ignore: noGpu,
  async fn() {
    const { gpu, model } = await setup();
    const seq = [5, 9, 2, 30, 17, 4, 4, 12, 8];
    const V = CONFIG.vocabSize;
    const full = zeros(gpu, [seq.length, V]);
    let batch = new Batch(gpu);
    model.forward(batch, new PackedInputs(gpu, packSequences([{ ids: seq }])), { logits: full });
    const [want] = await batch.read([full]);
    // Slot 1 of 2, so rows of slot 0 (left as garbage) must be ignored.
    const cache = new KvCache(gpu, model, 2, 16);
    const base = 16;
    const chunk = (from: number, to: number) => {
      const n = to - from;
      const idx = Array.from({ length: n }, (_, i) => from + i);
      return inferForward(batch, cache, {
        ids: Uint32Array.from(idx, (i) => seq[i]),
        positions: Uint32Array.from(idx),
        rows: Uint32Array.from(idx, (i) => base + i),
        kvStart: new Uint32Array(n).fill(base),
        kvEnd: Uint32Array.from(idx, (i) => base + i + 1),
        select: Uint32Array.from({ length: n }, (_, i) => i),
      });
    };
    batch = new Batch(gpu);
    const parts = [chunk(0, 4), chunk(4, 7), chunk(7, 8), chunk(8, 9)];
    const got = await batch.read(parts);
    const flat = new Float32Array(seq.length * V);
    let at = 0;
    for (const g of got) {
      flat.set(g as Float32Array, at);
      at += g.length;
    }
    assertClose("cached logits", flat, want, LOGITS);
  },
});

Deno.test({
  name: "an f16 KV cache gives the f32 cache's decode logits to within f16 rounding of k and v",
  ignore: noGpu || noF16,
  async fn() {
    const { gpu, model } = await setup();
    const seq = [5, 9, 2, 30, 17, 4, 4, 12, 8, 19, 3];
    const V = CONFIG.vocabSize;
    const logitsWith = async (dtype: "f32" | "f16") => {
      // Slots 0 and 2 of 3 decode together after one prefill, as rollouts do.
      const cache = new KvCache(gpu, model, 3, 16, dtype);
      assert.equal(cache.k[0].dtype, dtype);
      const slots = [0, 2];
      const run = (from: number, to: number) => {
        const idx = slots.flatMap((s) => Array.from({ length: to - from }, (_, i) => [s, from + i]));
        const batch = new Batch(gpu);
        const out = inferForward(batch, cache, {
          ids: Uint32Array.from(idx, ([s, i]) => seq[(i + s) % seq.length]),
          positions: Uint32Array.from(idx, ([, i]) => i),
          rows: Uint32Array.from(idx, ([s, i]) => s * 16 + i),
          kvStart: Uint32Array.from(idx, ([s]) => s * 16),
          kvEnd: Uint32Array.from(idx, ([s, i]) => s * 16 + i + 1),
          select: Uint32Array.from(idx, (_, n) => n),
        });
        return batch.read([out]).then(([x]) => x as Float32Array);
      };
      const parts = [await run(0, 8)];
      for (let i = 8; i < seq.length; i++) parts.push(await run(i, i + 1));
      cache.release();
      return Float32Array.from(parts.flatMap((p) => [...p]));
    };
    const f32 = await logitsWith("f32"), f16 = await logitsWith("f16");
    assert.equal(f16.length, 2 * seq.length * V);
    let diff = 0, scale = 0;
    for (let i = 0; i < f32.length; i++) {
      diff = Math.max(diff, Math.abs(f16[i] - f32[i]));
      scale = Math.max(scale, Math.abs(f32[i]));
    }
    // k and v rounded to f16 (relative 2^-11) move the logits a little, never by much.
    assert.ok(diff > 0, "the f16 cache must round k and v");
    assert.ok(diff < 2e-2 * scale, `f16 cache logits differ by ${diff} (largest logit ${scale})`);
  },
});

/** Greedy continuation by the f64 reference: argmax of the last position, repeated. */
function greedyRef(ref: RefParams, prompt: number[], steps: number, stop: number[]): number[] {
  const seq = [...prompt], out: number[] = [];
  for (let i = 0; i < steps; i++) {
    const logits = modelLogitsRef(CONFIG, ref, { seqs: [seq] });
    const row = logits.subarray((seq.length - 1) * CONFIG.vocabSize);
    let best = 0;
    for (let v = 1; v < CONFIG.vocabSize; v++) if (row[v] > row[best]) best = v;
    out.push(best);
    seq.push(best);
    if (stop.includes(best)) break;
  }
  return out;
}

Deno.test({
  name: "greedy generation gives the reference's exact ids for one sequence and for a batch of unequal prompts",
  ignore: noGpu,
  async fn() {
    const { ref, model } = await setup();
    const prompts = [[1, 2, 3], [7], [30, 29, 28, 27, 26, 25, 24], [11, 5]];
    const gen = new Generator(model, { slots: 4, maxLen: 40, blockSteps: 3 });
    const alone = gen.open(prompts[0], 0);
    const [single] = await gen.decode([alone], [{ maxNewTokens: 10, stopIds: [] }], { temperature: 0 });
    assert.deepEqual(single.ids, greedyRef(ref, prompts[0], 10, []));
    assert.equal(single.finish, "max_tokens");
    gen.close(alone);
    const seqs = prompts.map((p, i) => gen.open(p, i));
    const budgets = [12, 5, 9, 7];
    const limits = budgets.map((maxNewTokens) => ({ maxNewTokens, stopIds: [] }));
    const outs = await gen.decode(seqs, limits, { temperature: 0 });
    outs.forEach((o, i) => assert.deepEqual(o.ids, greedyRef(ref, prompts[i], budgets[i], []), `prompt ${i}`));
    // Continue sequence 2 after an "environment reply", stopping at a stop id the reference reaches.
    gen.append(seqs[2], [3, 3]);
    const history = [...prompts[2], ...outs[2].ids, 3, 3];
    const expected = greedyRef(ref, history, 10, []);
    const stopAt = expected[3];
    const [cont] = await gen.decode([seqs[2]], [{ maxNewTokens: 10, stopIds: [stopAt] }], { temperature: 0 });
    assert.deepEqual(cont.ids, expected.slice(0, expected.indexOf(stopAt) + 1));
    assert.equal(cont.finish, "stop");
    for (const lp of cont.logprobs) assert.ok(lp <= 0 && Number.isFinite(lp));
  },
});

Deno.test({
  name: "sampled generation replays exactly from the same seeds and stops at the slot's length",
  ignore: noGpu,
  async fn() {
    const { model } = await setup();
    const run = async () => {
      const gen = new Generator(model, { slots: 2, maxLen: 12, blockSteps: 4 });
      const a = gen.open([1, 2, 3], 42), b = gen.open([4, 5], 43);
      const res = await gen.decode([a, b], [{ maxNewTokens: 20, stopIds: [] }, { maxNewTokens: 6, stopIds: [] }], {
        temperature: 1,
        topP: 0.9,
      });
      gen.release();
      return res;
    };
    const first = await run(), second = await run();
    assert.deepEqual(first, second);
    assert.equal(first[0].finish, "length");
    assert.equal(first[0].ids.length, 12 - 3);
    assert.equal(first[1].ids.length, 6);
  },
});

Deno.test({
  name: "advance: one block per call, pieces that add up to decode's turn, and samples that ignore batch-mates",
  ignore: noGpu,
  async fn() {
    const { model } = await setup();
    const limits = { maxNewTokens: 11, stopIds: [] as number[] };
    const settings = { temperature: 1, topP: 0.9 };
    // decode: both sequences together, whole turns.
    const gen = new Generator(model, { slots: 2, maxLen: 32, blockSteps: 3 });
    const a = gen.open([1, 2, 3], 42), b = gen.open([4, 5], 43);
    const whole = await gen.decode([a, b], [limits, { ...limits, maxNewTokens: 5 }], settings);
    gen.release();
    // advance: sequence a alone, a block (blockSteps + 1 = 4 tokens) per call, then b joins with a prompt pending.
    const step = new Generator(model, { slots: 2, maxLen: 32, blockSteps: 3 });
    const a2 = step.open([1, 2, 3], 42);
    const first = await step.advance([a2], [limits], settings);
    assert.equal(first[0].ids.length, 4);
    assert.equal(first[0].finish, undefined, "the turn goes on");
    const b2 = step.open([4, 5], 43);
    const ids = [...first[0].ids], logprobs = [...first[0].logprobs];
    let pieces = await step.advance(
      [b2, a2],
      [{ ...limits, maxNewTokens: 5 }, { ...limits, maxNewTokens: 7 }],
      settings,
    );
    assert.equal(pieces[0].ids.length, 4);
    ids.push(...pieces[1].ids);
    logprobs.push(...pieces[1].logprobs);
    const bIds = [...pieces[0].ids];
    pieces = await step.advance([a2, b2], [{ ...limits, maxNewTokens: 3 }, { ...limits, maxNewTokens: 1 }], settings);
    assert.deepEqual(pieces.map((p) => [p.ids.length, p.finish]), [[3, "max_tokens"], [1, "max_tokens"]]);
    ids.push(...pieces[0].ids);
    logprobs.push(...pieces[0].logprobs);
    bIds.push(...pieces[1].ids);
    // Nothing left to sample: a finished piece with no tokens, and no GPU work.
    const none = await step.advance([a2], [{ ...limits, maxNewTokens: 0 }], settings);
    assert.deepEqual(none, [{ ids: [], logprobs: [], finish: "max_tokens" }]);
    step.release();
    assert.deepEqual(ids, whole[0].ids, "a's turn: the same ids, alone or beside b, whole or in blocks");
    assert.deepEqual(bIds, whole[1].ids);
    assert.equal(whole[0].finish, "max_tokens");
    for (let k = 0; k < ids.length; k++) assert.ok(Math.abs(logprobs[k] - whole[0].logprobs[k]) < 1e-5, `logprob ${k}`);
  },
});

Deno.test("prefillTokenLimit keeps a prefill's widest activation inside the binding limit", () => {
  // The BFCL tiny model (hidden 128, MLP 512) on lavapipe's 128 MiB bindings: 64 prompts of about 1,400 tokens
  // (90,000 rows) passed it in one submit; 65,536 rows of 512 f32 fill it exactly.
  const plan = { hidden: 128, heads: 4, headDim: 32, intermediate: 512 } as Parameters<typeof prefillTokenLimit>[0];
  assert.equal(prefillTokenLimit(plan, 128 * 1024 * 1024), 65536);
  assert.ok(90_000 * 512 * 4 > 128 * 1024 * 1024);
  // The widest of I, H·D and C decides.
  assert.equal(prefillTokenLimit({ ...plan, intermediate: 64 }, 4096), 4096 / (4 * 128));
  assert.equal(prefillTokenLimit({ ...plan, heads: 40 }, 1 << 20), Math.floor((1 << 20) / (4 * 40 * 32)));
});

Deno.test({
  name: "a prefill in several submits (prefillTokens) gives the one-submit generation's exact ids and log-probs",
  ignore: noGpu,
  async fn() {
    const { model } = await setup();
    // Prompts of 9, 2 and 6 tokens: with 4 tokens a submit, the first is cut across submits mid-sequence.
    const prompts = [[5, 9, 2, 30, 17, 4, 4, 12, 8], [7, 1], [3, 14, 15, 9, 26, 5]];
    const run = async (prefillTokens?: number) => {
      const gen = new Generator(model, { slots: 3, maxLen: 32, blockSteps: 2, prefillTokens });
      const seqs = prompts.map((p, i) => gen.open(p, i));
      const limits = prompts.map(() => ({ maxNewTokens: 6, stopIds: [] }));
      const first = await gen.decode(seqs, limits, { temperature: 0 });
      // An environment's reply of 5 tokens to each, then more: the second prefill is cut too.
      seqs.forEach((s, i) => gen.append(s, [2 + i, 3, 4, 5, 6]));
      const second = await gen.decode(seqs, limits, { temperature: 0 });
      const submits = gen.timing.prefillSubmits;
      gen.release();
      return { out: [...first, ...second], submits };
    };
    const whole = await run(), cut = await run(4);
    assert.equal(whole.submits, 2, "one prefill submit each time");
    // 14 pending tokens (17 prompt tokens less one each), then 15 (each sequence's last sampled token and the 5
    // appended): 4 + 4 submits.
    assert.equal(cut.submits, 8);
    cut.out.forEach((o, i) => {
      assert.deepEqual(o.ids, whole.out[i].ids, `sequence ${i}`);
      assertClose(`sequence ${i} log-probs`, o.logprobs, whole.out[i].logprobs, { atol: 1e-5, rtol: 1e-5 });
    });
  },
});

Deno.test({
  name: "the fused gate/up/SwiGLU decodes as the unfused path (CRUCIBLE_FUSE=0): logits, greedy ids, 2 dispatches " +
    "fewer a layer",
  ignore: noGpu,
  async fn() {
    const { gpu, model } = await setup();
    const seq = [5, 9, 2, 30, 17, 4, 4, 12, 8, 19, 3];
    const prompts = [[1, 2, 3], [30, 29, 28, 27, 26], [11, 5]];
    const run = async (fuse: boolean) => {
      if (!fuse) Deno.env.set(FUSE_ENV, "0");
      try {
        // A prefill of 8 tokens in each of 2 slots, then one token per slot a step, as rollouts decode.
        const cache = new KvCache(gpu, model, 2, 16);
        const logits: number[] = [], dispatches: number[] = [];
        for (const [from, to] of [[0, 8], ...Array.from({ length: 3 }, (_, i) => [8 + i, 9 + i])]) {
          const idx = [0, 1].flatMap((s) => Array.from({ length: to - from }, (_, i) => [s, from + i]));
          const batch = new Batch(gpu);
          const out = inferForward(batch, cache, {
            ids: Uint32Array.from(idx, ([s, i]) => seq[(i + 3 * s) % seq.length]),
            positions: Uint32Array.from(idx, ([, i]) => i),
            rows: Uint32Array.from(idx, ([s, i]) => s * 16 + i),
            kvStart: Uint32Array.from(idx, ([s]) => s * 16),
            kvEnd: Uint32Array.from(idx, ([s, i]) => s * 16 + i + 1),
            select: Uint32Array.from(idx, (_, n) => n),
          });
          dispatches.push(batch.dispatches);
          logits.push(...(await batch.read([out]))[0] as Float32Array);
        }
        cache.release();
        const gen = new Generator(model, { slots: 3, maxLen: 40, blockSteps: 3 });
        const seqs = prompts.map((p, i) => gen.open(p, i));
        const limits = prompts.map(() => ({ maxNewTokens: 9, stopIds: [] }));
        const ids = (await gen.decode(seqs, limits, { temperature: 0 })).map((o) => o.ids);
        gen.release();
        return { logits, dispatches, ids };
      } finally {
        Deno.env.delete(FUSE_ENV);
      }
    };
    const fused = await run(true), plain = await run(false);
    const fewer = 2 * CONFIG.numLayers;
    assert.deepEqual(fused.dispatches, plain.dispatches.map((n) => n - fewer), "gate, up and SwiGLU: one dispatch");
    assertClose("fused decode logits", fused.logits, plain.logits, LOGITS);
    assert.deepEqual(fused.ids, plain.ids);
  },
});
