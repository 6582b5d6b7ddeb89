// DPO through the whole model: the loss of pairs of multi-turn sequences (trained turns only) and the gradient of
// every parameter against the float64 model reference (tests/reference/model.ts) with src/rl/dpo.ts's dpoLoss on
// its log-probabilities, gradients by central finite differences; the reference's log-probabilities measured on the
// starting weights give exactly log 2 per pair; micro-batching pairs does not change the step.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { paramTable } from "../../src/model/params.ts";
import { dpoLoss, type DpoOptions } from "../../src/rl/dpo.ts";
import { createLearner } from "../../src/update/learner.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import {
  dpoStep,
  pairLogps,
  positionWeights,
  type PreferencePair,
  recordDpo,
  type ReferencedPair,
} from "../../src/update/dpo_update.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogprobRef, type RefParams } from "../reference/model.ts";
import { BASE, GRAD, randomParams, toF32 } from "../model/golden.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const config = parseModelConfig({ ...BASE, model_type: "qwen2", tie_word_embeddings: false });

/** A sequence: a prompt of `prompt` ids, then turns (mask 1) and observations (mask 0) as `mask` says. */
function seq(ids: number[], prompt: number, mask: number[]) {
  assert.equal(prompt + mask.length, ids.length);
  return { ids, promptLength: prompt, mask };
}

// Two pairs; each pair's sequences share their prompt. Pair 1's chosen side has an observation between two turns.
const PAIRS: PreferencePair[] = [
  {
    chosen: seq([3, 17, 5, 28, 9, 1, 6], 3, [1, 1, 0, 1]),
    rejected: seq([3, 17, 5, 2, 2, 2], 3, [1, 1, 1]),
  },
  {
    chosen: seq([4, 4, 22, 0, 13, 7, 8, 10], 2, [1, 1, 0, 0, 1, 1]),
    rejected: seq([4, 4, 11, 12], 2, [1, 0]),
  },
];

/** The f64 sequence log-probabilities DPO takes: Σ (or mean) of logp over trained positions. */
function refLogps(p: RefParams, mean: boolean): { chosen: number[]; rejected: number[] } {
  const seqs = PAIRS.flatMap((q) => [q.chosen, q.rejected]);
  const { logp } = modelLogprobRef(config, p, { seqs: seqs.map((s) => s.ids) });
  let at = 0;
  const sums = seqs.map((s) => {
    const w = positionWeights(s, mean);
    const v = w.reduce((a, x, t) => a + x * logp[at + t], 0);
    at += s.ids.length;
    return v;
  });
  return { chosen: sums.filter((_, i) => i % 2 === 0), rejected: sums.filter((_, i) => i % 2 === 1) };
}

const REF = { refChosen: [-20, -30], refRejected: [-18, -9] };

/** The mean DPO loss of the pairs in f64 against fixed reference log-probabilities. */
function lossRef(p: RefParams, o: DpoOptions): number {
  const s = refLogps(p, o.lossType === "ipo");
  const r = dpoLoss({ ...s, ...REF }, o);
  return r.losses.reduce((a, x) => a + x, 0) / r.losses.length;
}

const CASES: DpoOptions[] = [{ lossType: "sigmoid", beta: 0.1 }, { lossType: "ipo", beta: 0.5 }, {
  lossType: "hinge",
  beta: 0.1,
}];

for (const o of CASES) {
  Deno.test({
    name: `DPO through the model (${o.lossType}): the loss and the parameters' gradients match the f64 reference`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      const ref = randomParams(config, 5);
      const l = createLearner(gpu, { config, tensors: toF32(ref) });
      const referenced: ReferencedPair[] = PAIRS.map((p, i) => ({
        ...p,
        refChosen: REF.refChosen[i],
        refRejected: REF.refRejected[i],
      }));
      const batch = new Batch(gpu);
      l.grads.clear(batch);
      const r = recordDpo(batch, l, {
        pairs: referenced,
        reference: referenced.flatMap((p) => [p.refChosen, p.refRejected]),
        scale: 1 / PAIRS.length,
        settings: o,
      }, true);
      const [stats] = await batch.read([r.stats]);
      r.release();
      const loss = (stats[0] + stats[5]) / 2;
      assertClose("loss", [loss], [lossRef(ref, o)], { atol: 1e-5, rtol: 1e-5 });
      const got = await l.grads.toHost();
      // Every parameter once (sigmoid); the other losses differ only in the per-sequence slope: two parameters each.
      const names = paramTable(config).map((p) => p.name)
        .filter((n) =>
          o.lossType === "sigmoid" || n === "model.norm.weight" || n === "model.layers.0.self_attn.q_proj.weight"
        );
      assert.ok(names.length >= 2);
      for (const name of names) {
        const spec = { name };
        const fd = numericGrad((x) => lossRef(new Map(ref).set(spec.name, x), o), ref.get(spec.name)!, 1e-5);
        assertClose(`d ${spec.name}`, got.get(spec.name)!, fd, GRAD);
      }
      for (const t of [l.model.weights, l.grads]) t.release();
    },
  });
}

Deno.test({
  name: "DPO: the reference measured on the starting weights gives log 2 a pair, and micro-batching changes no step",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const tensors = toF32(randomParams(config, 8));
    const run = async (microBatchTokens: number) => {
      const l = createLearner(gpu, { config, tensors });
      const settings = { microBatchTokens, beta: 0.1 };
      const own = await pairLogps(l, PAIRS, settings);
      const pairs = PAIRS.map((p, i) => ({ ...p, refChosen: own.chosen[i], refRejected: own.rejected[i] }));
      const opt = new AdamW(gpu, l.model.weights, l.grads, {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0,
        maxGradNorm: 1,
      });
      const first = await dpoStep(l, opt, { pairs, settings, lr: () => 0.01 });
      const second = await dpoStep(l, opt, { pairs, settings, lr: () => 0.01 });
      const weights = await l.model.weights.toHost();
      for (const t of [l.model.weights, l.grads]) t.release();
      opt.release();
      return { own, first, second, weights };
    };
    const whole = await run(1 << 20), split = await run(8);
    // On the weights the reference was measured on, z is exactly 0: the same forward and the same sums.
    assert.equal(whole.first.loss, Math.fround(Math.LN2));
    assert.equal(whole.first["rewards/margins"], 0);
    assert.equal(whole.first["rewards/accuracies"], 0);
    assert.ok(whole.second.loss < whole.first.loss, `${whole.second.loss} after ${whole.first.loss}`);
    assert.ok(whole.second["rewards/margins"] > 0 && whole.second["rewards/accuracies"] === 1);
    assertClose("reference log-probs", split.own.chosen, whole.own.chosen, { atol: 1e-5, rtol: 1e-6 });
    assertClose("second loss", [split.second.loss], [whole.second.loss], { atol: 1e-5, rtol: 1e-5 });
    for (const [k, v] of whole.weights) assertClose(k, split.weights.get(k)!, v, { atol: 1e-6, rtol: 1e-5 });
  },
});
