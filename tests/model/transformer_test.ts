// Golden tests of the whole model on tiny random models, one per architecture: logits, per-token log-probs and
// entropies, the SFT loss, every parameter's gradient, and the loss after a few AdamW steps, all against the
// float64 reference in tests/reference/model.ts (gradients by central finite differences of its loss).
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { zeros } from "../../src/gpu/tensor.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { PackedInputs, packSequences } from "../../src/model/packing.ts";
import { paramTable } from "../../src/model/params.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { TensorSet } from "../../src/model/weights.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogprobRef, modelLossRef } from "../reference/model.ts";
import { adamwRef } from "../reference/optimizer.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { ARCHS, BASE, GRAD, LOGITS, randomParams, SEQS, sftGrad, toF32 } from "./golden.ts";

for (const [name, overrides] of ARCHS) {
  Deno.test({
    name: `model golden test, ${name}: logits, log-probs, entropy, loss, every gradient, 3 AdamW steps`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      const config = parseModelConfig({ ...BASE, ...overrides });
      const ref = randomParams(config, 7);
      const weights = TensorSet.fromHost(gpu, config, toF32(ref));
      const model = new Transformer(gpu, config, weights, { recompute: name.includes("tied") });
      const packed = packSequences(SEQS.map((ids) => ({ ids })));
      const inputs = new PackedInputs(gpu, packed);
      const expected = modelLogprobRef(config, ref, { seqs: SEQS });

      // Inference: full logits, log-probs and entropies.
      const T = packed.tokens;
      const logits = zeros(gpu, [T, config.vocabSize]);
      let batch = new Batch(gpu);
      const inf = model.forward(batch, inputs, { logits });
      const [gl, glp, gent] = await batch.read([logits, inf.logp, inf.entropy]);
      assertClose("logits", gl, expected.logits, LOGITS);
      assertClose(
        "logp",
        glp.map((v, i) => v * expected.mask[i]),
        expected.logp.map((v, i) => v * expected.mask[i]),
        LOGITS,
      );
      assertClose("entropy", gent, expected.entropy, LOGITS);

      // Training: loss and every gradient.
      const grads = TensorSet.zeros(gpu, config);
      batch = new Batch(gpu);
      const lossGrad = sftGrad(gpu, expected.mask);
      const tr = model.forward(batch, inputs, { grads, lossGrad });
      const [tlp] = await batch.read([tr.logp]);
      const count = expected.mask.reduce((a, b) => a + b, 0);
      const loss = -Array.from(tlp).reduce((a, v, i) => a + v * expected.mask[i], 0) / count;
      const refLoss = modelLossRef(config, ref, { seqs: SEQS });
      assertClose("loss", [loss], [refLoss], { atol: 1e-5, rtol: 1e-5 });
      const got = await grads.toHost();
      for (const spec of paramTable(config)) {
        const p = ref.get(spec.name)!;
        const fd = numericGrad((x) => modelLossRef(config, new Map(ref).set(spec.name, x), { seqs: SEQS }), p, 1e-5);
        assertClose(`d ${spec.name}`, got.get(spec.name)!, fd, GRAD);
      }

      if (!name.includes("untied")) return; // the optimizer path is the same for every architecture: once is enough
      // Three AdamW steps (clipping on), against the reference's f64 steps with finite-difference gradients.
      const opt = new AdamW(gpu, weights, grads, {
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-8,
        weightDecay: 0.1,
        maxGradNorm: 1,
      });
      let refP = new Map(ref);
      const refM = new Map([...ref].map(([k, v]) => [k, new Float64Array(v.length)]));
      const refV = new Map([...ref].map(([k, v]) => [k, new Float64Array(v.length)]));
      const lr = 0.05;
      for (let step = 1; step <= 3; step++) {
        batch = new Batch(gpu);
        grads.clear(batch);
        const out = model.forward(batch, inputs, { grads, lossGrad });
        opt.record(batch, lr);
        const [stats] = await batch.read([opt.stats]);
        out.logp.release();
        out.entropy.release();
        assert.ok(opt.commit(stats).applied);
        const fd = new Map([...refP].map(([k, v]) => [
          k,
          numericGrad((x) => modelLossRef(config, new Map(refP).set(k, x), { seqs: SEQS }), v, 1e-5),
        ]));
        let ss = 0;
        for (const g of fd.values()) for (const x of g) ss += x * x;
        const scale = Math.min(1, 1 / (Math.sqrt(ss) + 1e-6));
        const next = new Map<string, Float64Array>();
        for (const spec of paramTable(config)) {
          const k = spec.name;
          const r = adamwRef(refP.get(k)!, fd.get(k)!, refM.get(k)!, refV.get(k)!, {
            lr,
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weightDecay: spec.decay ? 0.1 : 0,
            step,
            scale,
          });
          next.set(k, r.w);
          refM.set(k, r.m);
          refV.set(k, r.v);
        }
        refP = next;
      }
      batch = new Batch(gpu);
      const after = model.forward(batch, inputs);
      const [alp] = await batch.read([after.logp]);
      const lossAfter = -Array.from(alp).reduce((a, v, i) => a + v * expected.mask[i], 0) / count;
      const refAfter = modelLossRef(config, refP, { seqs: SEQS });
      assert.ok(refAfter < refLoss, "the reference loss must fall over three steps");
      assertClose("loss after 3 AdamW steps", [lossAfter], [refAfter], { atol: 1e-4, rtol: 1e-4 });
      inputs.release();
      weights.release();
      grads.release();
      opt.release();
    },
  });
}
