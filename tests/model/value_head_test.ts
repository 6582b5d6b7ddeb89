// A critic: a model whose config.json names *ForTokenClassification has a value head (score.weight, score.bias)
// instead of an LM head; its values and every gradient of Σ dV·V match the f64 reference (central differences).
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost } from "../../src/gpu/tensor.ts";
import { parseModelConfig, toHfConfig } from "../../src/model/config.ts";
import { initParams } from "../../src/model/init.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { paramTable } from "../../src/model/params.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { TensorSet } from "../../src/model/weights.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelValuesRef, type RefParams } from "../reference/model.ts";
import { Rng } from "../../src/util/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const config = parseModelConfig({
  model_type: "qwen2",
  architectures: ["Qwen2ForTokenClassification"],
  vocab_size: 23,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  tie_word_embeddings: true,
});
const SEQS = [[3, 7, 1, 9, 12], [4, 4, 20]];

Deno.test("a *ForTokenClassification config is a critic: score.weight and score.bias, no LM head", () => {
  assert.equal(config.valueHead, true);
  const names = paramTable(config).map((p) => p.name);
  assert.deepEqual(names.slice(-3), ["model.norm.weight", "score.weight", "score.bias"]);
  const hf = toHfConfig(config);
  assert.deepEqual(hf.architectures, ["Qwen2ForTokenClassification"]);
  assert.equal(parseModelConfig(hf).valueHead, true);
});

Deno.test({
  name: "a critic's values and every gradient of Σ dV·V match the f64 reference",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const host = initParams(config, 3, { std: 0.2 });
    const rng = new Rng(8);
    host.set("score.weight", Float32Array.from({ length: 16 }, () => rng.normal() * 0.3));
    host.set("score.bias", Float32Array.from([0.25]));
    const model = Transformer.fromHost(gpu, config, host);
    const grads = TensorSet.zeros(gpu, config);
    const T = SEQS.flat().length;
    const dv = Float32Array.from({ length: T }, () => rng.normal());
    const inputs = new PackedInputs(gpu, packSequences(SEQS.map((ids) => ({ ids }))));
    const batch = new Batch(gpu);
    grads.clear(batch);
    const dValues = fromHost(gpu, dv, [T, 1]);
    const values = model.values(batch, inputs, { grads, dValues });
    const [got] = await batch.read([values]);
    const ref: RefParams = new Map([...host].map(([k, v]) => [k, Float64Array.from(v)]));
    assertClose("values", got, modelValuesRef(config, ref, { seqs: SEQS }), { atol: 2e-5, rtol: 1e-4 });
    const gpuGrads = await grads.toHost();
    for (const spec of paramTable(config)) {
      const loss = (x: Float64Array) =>
        modelValuesRef(config, new Map(ref).set(spec.name, x), { seqs: SEQS }).reduce((a, v, t) => a + v * dv[t], 0);
      const fd = numericGrad(loss, ref.get(spec.name)!, 1e-5);
      assertClose(`d${spec.name}`, gpuGrads.get(spec.name)!, fd, { atol: 5e-4, rtol: 5e-3 });
    }
    assert.throws(() => model.forward(new Batch(gpu), inputs), /value head: use values\(\)/);
    for (const t of [values, dValues]) t.release();
    inputs.release();
  },
});
