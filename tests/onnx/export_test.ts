// The ONNX export against the f64 reference and against Crucible's own forward: for the built-in tiny model and a
// small random model of each architecture, onnxruntime-web's logits (one call from an empty cache, and the same
// tokens fed in chunks through the KV cache) and greedy generation in both engines.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import { Generator } from "../../src/model/generate.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { onnxBytes } from "../../src/onnx/export.ts";
import { createSession, loadOrt } from "../../src/onnx/runtime.ts";
import { OnnxSampler } from "../../src/onnx/sampler.ts";
import { assertClose, type Tolerance } from "../reference/check.ts";
import { modelLogitsRef } from "../reference/model.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { type TestModel, testModels } from "./models.ts";

// Measured worst |onnx - f64 reference| over 40 tokens (a 20-token prefill, then 20 cached steps; logits up to 7):
// tiny 5e-7, qwen2.5-shaped 1.2e-5, qwen3 4.7e-6, llama 1.5e-5; against Crucible's forward 4e-7, 8.8e-6, 6.1e-6,
// 1.0e-5. f16 weights are compared with the reference of the f16-rounded weights: the same errors.
const LOGITS: Tolerance = { atol: 2e-5, rtol: 1e-4 };
const ENGINES: Tolerance = LOGITS;

const MODELS = testModels();

/** A prompt of `n` ids spread over the vocabulary. */
function prompt(m: TestModel, n: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 7 + 3) % m.config.vocabSize);
}

async function sampler(m: TestModel, dtype: "f32" | "f16" = "f32"): Promise<OnnxSampler> {
  const session = await createSession(await onnxBytes(m, dtype));
  return new OnnxSampler(await loadOrt(), session, m.config, { slots: 4, maxLen: 256 });
}

/** Logits [T, V] of `ids` from an empty cache, run in calls of `chunks` tokens (summing to ids.length). */
async function onnxLogits(s: OnnxSampler, ids: number[], chunks: number[]): Promise<Float32Array> {
  const seq = s.open([ids[0]], 0);
  const parts: number[] = [];
  let at = 1;
  for (const [i, n] of chunks.entries()) {
    const take = i === 0 ? n - 1 : n; // the first chunk's first id opened the sequence
    parts.push(...await s.step(seq, ids.slice(at, at + take)));
    at += take;
  }
  s.close(seq);
  return Float32Array.from(parts);
}

function reference(m: TestModel, ids: number[], round16 = false): Float64Array {
  const params = new Map([...m.tensors].map(([k, v]) => [k, Float64Array.from(round16 ? Float16Array.from(v) : v)]));
  return modelLogitsRef(m.config, params, { seqs: [ids] });
}

for (const m of MODELS) {
  Deno.test(`ONNX export, ${m.name}: onnxruntime-web's logits match the reference, with and without the KV cache`, async () => {
    const s = await sampler(m);
    const ids = prompt(m, 13);
    const ref = reference(m, ids);
    assertClose("logits in one call", await onnxLogits(s, ids, [13]), ref, LOGITS);
    assertClose("logits through the cache (5, 1, 1, 6 tokens)", await onnxLogits(s, ids, [5, 1, 1, 6]), ref, LOGITS);
  });

  Deno.test({
    name: `ONNX export, ${m.name}: Crucible's forward gives the same logits, and both engines the same greedy ids`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      const model = Transformer.fromHost(gpu, m.config, m.tensors);
      const ids = prompt(m, 9);
      const inputs = new PackedInputs(gpu, packSequences([{ ids }]));
      const logits = zeros(gpu, [ids.length, m.config.vocabSize]);
      const batch = new Batch(gpu);
      model.forward(batch, inputs, { logits });
      const [ours] = await batch.read([logits]);
      const s = await sampler(m);
      assertClose("logits, onnx vs Crucible", await onnxLogits(s, ids, [ids.length]), ours, ENGINES);

      const limits = [{ maxNewTokens: 24, stopIds: [] }];
      const generator = new Generator(model, { slots: 1, maxLen: 64, blockSteps: 8 });
      const [a] = await generator.decode([generator.open(ids, 0)], limits, { temperature: 0 });
      const [b] = await s.decode([s.open(ids, 0)], limits, { temperature: 0 });
      assert.deepEqual(b.ids, a.ids, "greedy ids, onnx vs Crucible");
      assertClose("log-probs of the greedy ids", b.logprobs, a.logprobs, { atol: 1e-4, rtol: 1e-4 });
      generator.release();
      model.weights.release();
    },
  });
}

Deno.test("ONNX export with f16 weights: the logits of the f16-rounded model, from a file half the size", async () => {
  const m = MODELS[1];
  const s = await sampler(m, "f16");
  const ids = prompt(m, 11);
  assertClose("f16 logits", await onnxLogits(s, ids, [4, 7]), reference(m, ids, true), LOGITS);
  const [f32, f16] = await Promise.all([onnxBytes(m, "f32"), onnxBytes(m, "f16")]);
  assert.ok(f16.length < 0.6 * f32.length, `f16 file ${f16.length} bytes vs f32 ${f32.length}`);
});

Deno.test("OnnxSampler: sampling at temperature 1 replays from its seed, and stops on a stop id", async () => {
  const m = MODELS[2];
  const s = await sampler(m);
  const ids = prompt(m, 5);
  const draw = async (seed: number) =>
    (await s.decode([s.open(ids, seed)], [{ maxNewTokens: 12, stopIds: [] }], { temperature: 1, topP: 0.9 }))[0];
  const [a, b] = [await draw(3), await draw(3)];
  assert.deepEqual(a.ids, b.ids);
  assert.equal(a.ids.length, 12);
  assert.ok(a.logprobs.every((lp) => lp <= 0 && Number.isFinite(lp)));
  const stop = a.ids[3];
  const c =
    (await s.decode([s.open(ids, 3)], [{ maxNewTokens: 12, stopIds: [stop] }], { temperature: 1, topP: 0.9 }))[0];
  assert.equal(c.finish, "stop");
  assert.deepEqual(c.ids, a.ids.slice(0, a.ids.indexOf(stop) + 1));
});
