// Growing a model by one layer (src/model/grow.ts), checked on the float64 reference (tests/reference/model.ts): the
// grown model's logits are the old one's wherever the layer goes, and finite differences of its loss show which of
// the new layer's tensors training moves first. Runs without a GPU.
import assert from "node:assert/strict";
import { parseModelConfig } from "../../src/model/config.ts";
import { insertLayer } from "../../src/model/grow.ts";
import { layerNames, paramTable } from "../../src/model/params.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogitsRef, modelLossRef, type RefParams } from "../reference/model.ts";
import { ARCHS, BASE, randomParams, SEQS, toF32 } from "./golden.ts";

const f64 = (m: Map<string, Float32Array>): RefParams => new Map([...m].map(([k, v]) => [k, Float64Array.from(v)]));

for (const [name, overrides] of ARCHS) {
  Deno.test(`a layer inserted first, between or last leaves the logits as they were (${name})`, () => {
    const config = parseModelConfig({ ...BASE, ...overrides });
    const old = toF32(randomParams(config, 11));
    const want = modelLogitsRef(config, f64(old), { seqs: SEQS });
    for (let at = 0; at <= config.numLayers; at++) {
      const grown = insertLayer(config, old, { at, seed: 5, std: 0.3 });
      assert.equal(grown.config.numLayers, config.numLayers + 1);
      assert.deepEqual([...grown.tensors.keys()], paramTable(grown.config).map((p) => p.name), "table order");
      // A zero o_proj and down_proj add exactly 0 to the residual: the same numbers, not merely close ones.
      assert.deepEqual(modelLogitsRef(grown.config, f64(grown.tensors), { seqs: SEQS }), want, `at ${at}`);
      // The old layers keep their tensors under their new indices; the new one's matrices are drawn.
      for (let l = 0; l < config.numLayers; l++) {
        const moved = layerNames(l >= at ? l + 1 : l), was = layerNames(l);
        assert.equal(grown.tensors.get(moved.q), old.get(was.q), `layer ${l} at ${at}`);
      }
      const fresh = layerNames(at);
      assert.ok(grown.tensors.get(fresh.q)!.some((v) => v !== 0), "q_proj is drawn");
      assert.ok(grown.tensors.get(fresh.o)!.every((v) => v === 0), "o_proj is zero");
      assert.ok(grown.tensors.get(fresh.inputNorm)!.every((v) => v === 1), "norms are ones");
    }
  });
}

Deno.test("the new layer learns: its output projections have a gradient at once, its inner matrices after them", () => {
  const config = parseModelConfig({ ...BASE, ...ARCHS[0][1] });
  const grown = insertLayer(config, toF32(randomParams(config, 11)), { at: 1, seed: 5, std: 0.3 });
  const p = f64(grown.tensors), n = layerNames(1);
  const grad = (name: string) =>
    numericGrad((x) => modelLossRef(grown.config, new Map(p).set(name, x), { seqs: SEQS }), p.get(name)!, 1e-5);
  const norm = (g: Float64Array) => Math.sqrt(g.reduce((a, v) => a + v * v, 0));
  assert.ok(norm(grad(n.o)) > 1e-3, "o_proj's gradient is not zero");
  assert.ok(norm(grad(n.down)) > 1e-3, "down_proj's gradient is not zero");
  // Behind a zero output projection, q, k, v, gate and up change nothing yet (to finite differences' rounding).
  for (const inner of [n.q, n.v, n.gate, n.up]) assert.ok(norm(grad(inner)) < 1e-8, inner);
});

Deno.test("growing refuses a place outside the model and weights that are not its config's", () => {
  const config = parseModelConfig({ ...BASE, ...ARCHS[1][1] });
  const old = toF32(randomParams(config, 3));
  assert.throws(() => insertLayer(config, old, { at: 3, seed: 1, std: 0.02 }), /place 3 must be .* 0 \(first\) to 2/);
  assert.throws(() => insertLayer(config, old, { at: -1, seed: 1, std: 0.02 }), /place -1/);
  const missing = new Map(old);
  missing.delete(layerNames(1).k);
  assert.throws(() => insertLayer(config, missing, { at: 0, seed: 1, std: 0.02 }), /no model\.layers\.1\.self_attn\.k/);
  const extra = new Map(old).set("score.weight", new Float32Array(BASE.hidden_size));
  assert.throws(() => insertLayer(config, extra, { at: 0, seed: 1, std: 0.02 }), /score\.weight not in its config/);
});
