// One decoder plan (src/model/plan.ts), three paths that follow it: a feature no architecture has, biases on the
// MLP's gate, up and down projections (ModelConfig.mlpBias, switched on only here), must reach the training forward
// (packed batch, activations kept for the backward), the KV-cached inference (prefill and continuations through
// the cache) and the ONNX graph (onnxruntime-web) together: their logits agree with one another and all differ
// from the same model with the flag off. A path that ignored the flag would give the flag-off logits and fail the
// agreement. The training backward reaches the new tensors, checked against finite differences of the f64
// reference (which has the toy too). And the architecture fields of the config are read in one file, the plan.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import type { ModelConfig } from "../../src/model/config.ts";
import { inferForward, KvCache } from "../../src/model/infer.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { paramTable } from "../../src/model/params.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { TensorSet } from "../../src/model/weights.ts";
import { onnxBytes } from "../../src/onnx/export.ts";
import { createSession, loadOrt } from "../../src/onnx/runtime.ts";
import { OnnxSampler } from "../../src/onnx/sampler.ts";
import { Rng } from "../../src/util/random.ts";
import { assertClose, type Tolerance } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogprobRef, modelLossRef } from "../reference/model.ts";
import { ARCHS, BASE as GOLDEN, GRAD, LOGITS, randomParams, SEQS, sftGrad, toF32 } from "../model/golden.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { testModels } from "./models.ts";

// As tests/onnx/export_test.ts measured between Crucible's forward and onnxruntime-web (up to 1e-5).
const PATHS: Tolerance = { atol: 2e-5, rtol: 1e-4 };
// The biases are drawn with std 0.3: the flag moves logits by far more than the paths differ.
const MOVED = 0.05;

const BASE = testModels()[3]; // llama-shaped: no q/k/v bias, no q/k norm, an untied head
const IDS = [3, 17, 5, 28, 9, 1, 7, 7, 40].map((i) => i % BASE.config.vocabSize);

/** The flag-off model's tensors, plus every tensor the flag adds to the parameter table (random). */
function withFlag(): { config: ModelConfig; tensors: Map<string, Float32Array>; added: string[] } {
  const config = { ...BASE.config, mlpBias: true };
  const rng = new Rng(5);
  const tensors = new Map(BASE.tensors), added: string[] = [];
  for (const s of paramTable(config)) {
    if (tensors.has(s.name)) continue;
    added.push(s.name);
    tensors.set(s.name, Float32Array.from({ length: s.shape[0] }, () => 0.3 * rng.normal()));
  }
  return { config, tensors, added };
}

/** Logits [T, V] and per-token log-probs [T] of the three paths. */
async function threePaths(config: ModelConfig, tensors: Map<string, Float32Array>) {
  const gpu = await testGpu();
  const V = config.vocabSize, T = IDS.length;
  const model = Transformer.fromHost(gpu, config, tensors);
  const inputs = new PackedInputs(gpu, packSequences([{ ids: IDS }]));
  // Training's forward twice: scoring (activations released) for the logits, and with gradients (activations
  // kept, the backward run) for the log-probs of the next ids.
  const logits = zeros(gpu, [T, V]);
  let batch = new Batch(gpu);
  model.forward(batch, inputs, { logits });
  const [train] = await batch.read([logits]);
  logits.release();
  const grads = TensorSet.zeros(gpu, config);
  batch = new Batch(gpu);
  const mask = IDS.map((_, i) => (i < T - 1 ? 1 : 0));
  const r = model.forward(batch, inputs, { grads, lossGrad: sftGrad(gpu, mask) });
  const [trainLogp] = await batch.read([r.logp]);
  const gradients = await grads.toHost();
  grads.release();

  // KV-cached inference: the ids in three calls (4, 1 and 4 tokens) through slot 1 of a two-slot cache.
  const maxLen = 32, cache = new KvCache(gpu, model, 2, maxLen);
  const infer: number[] = [];
  for (const [a, b] of [[0, 4], [4, 5], [5, T]]) {
    const n = b - a, at = (i: number) => maxLen + a + i;
    batch = new Batch(gpu);
    const out = inferForward(batch, cache, {
      ids: Uint32Array.from(IDS.slice(a, b)),
      positions: Uint32Array.from({ length: n }, (_, i) => a + i),
      rows: Uint32Array.from({ length: n }, (_, i) => at(i)),
      kvStart: new Uint32Array(n).fill(maxLen),
      kvEnd: Uint32Array.from({ length: n }, (_, i) => at(i) + 1),
      select: Uint32Array.from({ length: n }, (_, i) => i),
    });
    const [x] = await batch.read([out]);
    out.release();
    infer.push(...x);
  }
  cache.release();
  model.weights.release();

  // The ONNX graph on onnxruntime-web: the first id opens the sequence, then 3 and 5 more through its cache.
  const session = await createSession(await onnxBytes({ config, tensors }, "f32"));
  const s = new OnnxSampler(await loadOrt(), session, config, { slots: 1, maxLen });
  const seq = s.open([IDS[0]], 0);
  const onnx = [...await s.step(seq, IDS.slice(1, 4)), ...await s.step(seq, IDS.slice(4))];
  s.close(seq);
  await session.release();
  return { train, trainLogp, infer: Float32Array.from(infer), onnx: Float32Array.from(onnx), gradients };
}

/** log softmax(logits[t])[IDS[t + 1]] for every t but the last (which has no next id). */
function nextLogp(logits: Float32Array, V: number): number[] {
  return IDS.slice(0, -1).map((_, t) => {
    const row = logits.subarray(t * V, (t + 1) * V);
    const max = Math.max(...row);
    const lse = max + Math.log(row.reduce((a, v) => a + Math.exp(v - max), 0));
    return row[IDS[t + 1]] - lse;
  });
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

Deno.test({
  name: "decoder plan: a feature switched on in the plan moves training, KV-cached inference and ONNX together",
  ignore: noGpu,
  async fn() {
    const flag = withFlag();
    const layers = BASE.config.numLayers;
    assert.equal(flag.added.length, 3 * layers, `the flag adds gate, up and down biases: ${flag.added}`);
    assert.ok(flag.added.every((n) => /\.mlp\.(gate|up|down)_proj\.bias$/.test(n)), `${flag.added}`);
    const on = await threePaths(flag.config, flag.tensors);
    const off = await threePaths(BASE.config, BASE.tensors);
    for (const [name, p] of [["flag on", on], ["flag off", off]] as const) {
      assertClose(`${name}: KV-cached inference vs training forward`, p.infer, p.train, PATHS);
      assertClose(`${name}: ONNX graph vs training forward`, p.onnx, p.train, PATHS);
      const logp = nextLogp(p.onnx, BASE.config.vocabSize);
      const kept = p.trainLogp.subarray(0, IDS.length - 1);
      assertClose(`${name}: training log-probs (activations kept) vs the ONNX logits'`, kept, logp, PATHS);
    }
    for (const path of ["train", "infer", "onnx"] as const) {
      const moved = maxDiff(on[path], off[path]);
      assert.ok(moved > MOVED, `${path}: the flag moved the logits by only ${moved}`);
    }
    // The backward reaches the new tensors too: each bias gets a gradient.
    for (const name of flag.added) {
      const g = on.gradients.get(name);
      assert.ok(g && g.some((v) => v !== 0) && g.every(Number.isFinite), `gradient of ${name}`);
    }
  },
});

Deno.test({
  name: "decoder plan: the toy feature's logits and gradients match the f64 reference (finite differences)",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const llama = ARCHS.find(([name]) => name.startsWith("llama"))![1];
    const config = { ...parseModelConfig({ ...GOLDEN, ...llama }), mlpBias: true };
    const ref = randomParams(config, 9);
    const model = Transformer.fromHost(gpu, config, toF32(ref));
    const packed = packSequences(SEQS.map((ids) => ({ ids })));
    const inputs = new PackedInputs(gpu, packed);
    const expected = modelLogprobRef(config, ref, { seqs: SEQS });
    const logits = zeros(gpu, [packed.tokens, config.vocabSize]);
    let batch = new Batch(gpu);
    model.forward(batch, inputs, { logits });
    const [got] = await batch.read([logits]);
    assertClose("logits", got, expected.logits, LOGITS);
    const grads = TensorSet.zeros(gpu, config);
    batch = new Batch(gpu);
    model.forward(batch, inputs, { grads, lossGrad: sftGrad(gpu, expected.mask) });
    await batch.submit();
    const host = await grads.toHost();
    const biases = paramTable(config).filter((spec) => /\.mlp\.\w+_proj\.bias$/.test(spec.name));
    assert.equal(biases.length, 3 * config.numLayers);
    for (const spec of biases) {
      const loss = (x: Float64Array) => modelLossRef(config, new Map(ref).set(spec.name, x), { seqs: SEQS });
      assertClose(`d ${spec.name}`, host.get(spec.name)!, numericGrad(loss, ref.get(spec.name)!, 1e-5), GRAD);
    }
    model.weights.release();
  },
});

Deno.test("decoder plan: the config's architecture fields are read in one file of src/, the plan", async () => {
  const root = new URL("../../src/", import.meta.url).pathname;
  const fields = /\.(attentionBias|qkNorm|mlpBias|ropeTheta|rmsNormEps)\b/;
  const readers = new Set<string>();
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".ts") && fields.test(await Deno.readTextFile(path))) {
        readers.add(path.slice(root.length));
      }
    }
  };
  await walk(root.replace(/\/$/, ""));
  // config.ts defines and parses them; plan.ts is the one place that turns them into steps.
  assert.deepEqual([...readers].sort(), ["model/config.ts", "model/plan.ts"]);
});
