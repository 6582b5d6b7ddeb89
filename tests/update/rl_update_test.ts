// The update skips micro-batches whose gradient is exactly 0 (every advantage 0, no KL or entropy term), and the
// weights come out bit for bit as when every micro-batch is computed; with an entropy term nothing is skipped. Each
// result says how many micro-batches ran and what share of the weight they hold.
import assert from "node:assert/strict";
import { parseModelConfig } from "../../src/model/config.ts";
import { initParams } from "../../src/model/init.ts";
import { createLearner } from "../../src/update/learner.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { liveFirst, rlUpdate, type UpdateSequence } from "../../src/update/rl_update.ts";
import { Rng } from "../../src/util/random.ts";
import { lossOf } from "../rl/loss_settings.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const config = parseModelConfig({
  model_type: "qwen2",
  vocab_size: 40,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: true,
  max_position_embeddings: 128,
});

/**
 * One sequence per group of `length` tokens; the groups in `live` have advantage 0.7, the rest 0. By default groups
 * 0-1 have zero advantages and group 2 does not, one sequence per micro-batch (24 tokens, budget 24).
 */
function sequences(live = [2], groups = 3, length = 24): UpdateSequence[] {
  const rng = new Rng(4);
  return Array.from({ length: groups }, (_, group) => {
    const ids = Array.from({ length }, () => rng.int(40));
    const mask = ids.slice(8).map((_, j) => (j % 3 === 2 ? 0 : 1));
    return {
      ids,
      promptLength: 8,
      mask,
      group,
      advantages: mask.map(() => (live.includes(group) ? 0.7 : 0)),
      oldLogp: mask.map(() => -3),
    };
  });
}

async function update(computeAll: boolean, entropyCoef = 0, seqs = sequences()) {
  const gpu = await testGpu();
  const l = createLearner(gpu, { config, tensors: initParams(config, 9, { std: 0.05 }) });
  const opt = new AdamW(gpu, l.model.weights, l.grads, {
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0,
    maxGradNorm: 1,
  });
  const results = await rlUpdate(l, opt, {
    seqs,
    ppoEpochs: 1,
    miniBatchGroups: seqs.length,
    microBatchTokens: 24,
    lossAggMode: "token-mean",
    temperature: 1,
    lr: () => 0.01,
    loss: lossOf({ klKind: "none", klCoef: 0, entropyCoef }),
    computeAll,
  });
  const weights = await l.model.weights.toHost();
  for (const t of [l.model.weights, l.grads]) t.release();
  opt.release();
  return { results, weights };
}

Deno.test({
  name: "micro-batches with only zero advantages are skipped, and the weights are bit-identical to computing them",
  ignore: noGpu,
  async fn() {
    const skip = await update(false), all = await update(true);
    assert.deepEqual(skip.results.map((r) => r.skipped), [2]);
    assert.deepEqual(all.results.map((r) => r.skipped), [0]);
    // One micro-batch of three ran, holding a third of the token-mean weight (every sequence has 11 trained tokens).
    assert.deepEqual(skip.results.map((r) => [r.computed, r.computedShare]), [[1, 1 / 3]]);
    assert.deepEqual(all.results.map((r) => [r.computed, r.computedShare]), [[3, 1]]);
    assert.equal(skip.results[0].gradNorm, all.results[0].gradNorm);
    for (const [name, w] of all.weights) assert.deepEqual(skip.weights.get(name), w, name);
    const entropy = await update(false, 0.01);
    assert.deepEqual(entropy.results.map((r) => r.skipped), [0], "an entropy term has a gradient everywhere");
  },
});

Deno.test("liveFirst moves the sequences without a trained nonzero advantage to the end, each part in its order", () => {
  const q = (name: string, advantages: number[], mask: number[]) => ({ name, advantages, mask });
  const order = liveFirst([
    q("zero", [0, 0], [1, 1]),
    q("live", [0, -0.5], [1, 1]),
    q("masked", [0.9, 0], [0, 1]), // its only nonzero advantage is on a token it does not train
    q("live2", [0.25], [1]),
  ]).map((x) => x.name);
  assert.deepEqual(order, ["live", "live2", "zero", "masked"]);
});

Deno.test({
  name: "groups without signal between groups with one still fill skipped micro-batches of their own",
  ignore: noGpu,
  async fn() {
    // Four groups of 12 tokens, two to a micro-batch of 24: in the rollout's order (zero, live, zero, live) each
    // micro-batch would mix the two and none could be skipped.
    const seqs = sequences([1, 3], 4, 12);
    const skip = await update(false, 0, seqs), all = await update(true, 0, seqs);
    assert.deepEqual(skip.results.map((r) => [r.skipped, r.computed, r.computedShare]), [[1, 1, 0.5]]);
    assert.deepEqual(all.results.map((r) => [r.skipped, r.computed]), [[0, 2]]);
    assert.equal(skip.results[0].gradNorm, all.results[0].gradNorm);
    for (const [name, w] of all.weights) assert.deepEqual(skip.weights.get(name), w, name);
  },
});
