// Rolling a diverged step back (issue 32): the copy kept on the GPU gives back the weights, both AdamW moments and
// the update count from before a step that blew them up, bit for bit, for a model held in one arena and for one split
// by rows; a later keep moves the point rolled back to; the budget stops undoing past its limit; and the loss-spike
// rule fires over a running median only, never on an early or a non-finite loss.
import assert from "node:assert/strict";
import { withTensorLimit } from "../../src/gpu/device.ts";
import { SplitTensor } from "../../src/gpu/split.ts";
import { parseModelConfig } from "../../src/model/config.ts";
import { initParams } from "../../src/model/init.ts";
import { createLearner, type Learner } from "../../src/update/learner.ts";
import { AdamW } from "../../src/update/optimizer.ts";
import { Rollbacks, Snapshot, SpikeCheck } from "../../src/train/rollback.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { configSource } from "../../src/config/presets.ts";
import { supervisedStep } from "../../src/train/sft.ts";
import { weightNorm } from "../../src/train/divergence.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const CONFIG = parseModelConfig({
  model_type: "qwen2",
  vocab_size: 24,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  tie_word_embeddings: false,
  max_position_embeddings: 64,
});

const SEQS = [{ ids: [1, 5, 7, 9, 11, 3], promptLength: 2, mask: [0, 0, 1, 1, 1, 1] }];

/** One SFT step at learning rate `lr`; returns whether it was applied. */
async function step(l: Learner, opt: AdamW, lr: number): Promise<boolean> {
  const r = await supervisedStep(l, opt, { seqs: SEQS, microBatchTokens: 64, lr: () => lr });
  return r.applied;
}

/** Every value the optimizer changes, as bytes: weights, m and v by name, and the update count. */
async function state(opt: AdamW): Promise<{ bytes: Map<string, Uint8Array>; step: number }> {
  const bytes = new Map<string, Uint8Array>();
  for (const [kind, set] of [["w", opt.params], ["m", opt.m], ["v", opt.v]] as const) {
    for (const [name, data] of await set.toHost()) bytes.set(`${kind} ${name}`, new Uint8Array(data.buffer.slice(0)));
  }
  return { bytes, step: opt.step };
}

function assertSame(a: Awaited<ReturnType<typeof state>>, b: Awaited<ReturnType<typeof state>>, what: string) {
  assert.equal(a.step, b.step, `${what}: update count`);
  assert.equal(a.bytes.size, b.bytes.size);
  for (const [k, v] of a.bytes) assert.deepEqual(b.bytes.get(k), v, `${what}: ${k} differs`);
}

for (const split of [false, true]) {
  Deno.test({
    name: `a diverged step is rolled back bit for bit: weights, moments and update count (${
      split ? "matrices split by rows" : "one arena"
    })`,
    ignore: noGpu,
    async fn() {
      const base = await testGpu();
      const gpu = split ? withTensorLimit(base, 448) : base;
      const l = createLearner(gpu, { config: CONFIG, tensors: initParams(CONFIG, 5, { std: 0.05 }) });
      if (split) assert.ok(l.model.weights.stored("model.embed_tokens.weight") instanceof SplitTensor);
      else assert.ok(l.model.weights.arena, "the weights are one arena");
      const opt = new AdamW(gpu, l.model.weights, l.grads);
      assert.ok(await step(l, opt, 1e-2), "a first, healthy step");
      const keep = new Snapshot(gpu, [opt]);
      // 3 × the f32 weights (weights, m, v), padding included.
      const params = [...l.model.weights.tensors.values()].reduce((n, t) => n + t.size, 0);
      assert.ok(keep.bytes >= 12 * params && keep.bytes < 12 * params + 4096, `${keep.bytes} bytes`);
      const before = await state(opt), norm = await weightNorm(l);
      assert.ok(await step(l, opt, 1e6), "the blow-up is applied");
      const blown = await state(opt);
      assert.ok(await weightNorm(l) > 100 * norm, "the step blew the weights up");
      assert.notDeepEqual(blown.bytes.get("v model.norm.weight"), before.bytes.get("v model.norm.weight"));
      await keep.restore();
      assertSame(before, await state(opt), "after the rollback");
      assert.equal(await weightNorm(l), norm);
      // Training goes on from there, and a later keep is what the next rollback returns to.
      assert.ok(await step(l, opt, 1e-2));
      await keep.keep();
      const later = await state(opt);
      assert.ok(await step(l, opt, 1e6));
      await keep.restore();
      assertSame(later, await state(opt), "after the second rollback");
      keep.release();
      opt.release();
    },
  });
}

Deno.test({
  name: "the rollback budget undoes up to its limit and keeps no copy at 0",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const l = createLearner(gpu, { config: CONFIG, tensors: initParams(CONFIG, 5, { std: 0.05 }) });
    const opt = new AdamW(gpu, l.model.weights, l.grads);
    const none = new Rollbacks(gpu, [opt], 0);
    assert.equal(none.bytes, 0);
    assert.equal(await none.undo(), false);
    const two = new Rollbacks(gpu, [opt], 2);
    const start = await state(opt);
    for (let k = 1; k <= 2; k++) {
      await step(l, opt, 1e6);
      assert.equal(await two.undo(), true);
      assert.equal(two.count, k);
      assertSame(start, await state(opt), `rollback ${k}`);
    }
    assert.match(two.allUndone("RL") ?? "", /all 2 RL steps that updated the weights diverged/);
    await step(l, opt, 1e6);
    assert.equal(await two.undo(), false, "a third divergence is not undone");
    assert.notDeepEqual((await state(opt)).bytes, start.bytes);
    await two.accepted();
    assert.equal(two.allUndone("RL"), undefined, "a kept step is a result");
    two.release();
    opt.release();
  },
});

Deno.test("a loss spike is a value past factor × the running median, once there is a history", () => {
  const s = new SpikeCheck(3, { name: "loss", window: 4, minHistory: 3 });
  assert.equal(s.test(100), undefined, "no history yet");
  for (const v of [2, 1, 1.5]) s.accept(v);
  assert.equal(s.test(4.5), undefined, "3 × the median 1.5 is no spike");
  assert.match(s.test(4.51) ?? "", /loss 4\.510 is 3\.01 × the median 1\.500 of the last 3 steps/);
  assert.equal(s.test(NaN), undefined, "a non-finite loss is the skip guard's, not a spike");
  s.accept(NaN);
  s.accept(0.5);
  s.accept(0.5);
  // The window keeps the last 4 accepted: 1, 1.5, 0.5, 0.5, median 0.75.
  assert.match(s.test(2.3) ?? "", /median 0\.7500 of the last 4/);
  assert.equal(new SpikeCheck(0, { name: "loss", minHistory: 0 }).test(1e9), undefined, "factor 0 is off");
  // With a rise of 1 at least, a low loss's noise is no spike, a jump of more than 1 is.
  const low = new SpikeCheck(5, { name: "loss", minHistory: 3, minRise: 1 });
  for (const v of [0.05, 0.04, 0.06]) low.accept(v);
  assert.equal(low.test(0.9), undefined);
  assert.match(low.test(1.06) ?? "", /loss 1\.060 is 21\.2 × the median 0\.05000/);
});

// The main job's 159 SFT losses (configs/textcraft.yaml, models/crucible-tiny; `deno task bench train` on an H200,
// the same to three decimals on lavapipe), rounded to 3 decimals. Healthy, and heavy-tailed.
// deno-fmt-ignore
const MAIN_JOB_SFT = [
  0.358, 0.237, 0.283, 0.518, 0.234, 0.342, 0.286, 1.913, 0.281, 0.252, 1.483, 0.304, 0.182, 0.375, 0.222, 0.901,
  0.18, 0.648, 0.127, 0.286, 0.365, 0.208, 0.396, 0.239, 0.153, 0.241, 0.551, 0.189, 0.251, 0.3, 1.261, 0.281,
  0.284, 0.172, 0.253, 0.227, 0.732, 0.284, 0.192, 0.19, 1.811, 0.523, 0.265, 2.028, 0.33, 0.262, 0.301, 0.313,
  0.256, 0.463, 2.079, 0.912, 0.196, 0.296, 0.123, 0.204, 0.255, 0.146, 0.431, 0.347, 0.595, 1.372, 0.561, 0.272,
  0.19, 0.333, 0.377, 0.229, 0.104, 0.162, 0.209, 0.217, 0.517, 0.869, 0.301, 0.063, 0.703, 0.182, 0.053, 0.338,
  0.311, 0.218, 0.049, 0.14, 0.208, 0.081, 0.281, 0.155, 0.521, 0.653, 0.212, 0.314, 0.222, 0.104, 0.197, 0.389,
  0.202, 0.626, 0.142, 0.51, 0.988, 0.249, 0.129, 0.444, 0.256, 0.143, 0.39, 0.068, 0.255, 0.408, 0.272, 0.134,
  0.263, 0.299, 0.223, 0.269, 0.165, 0.213, 0.192, 0.386, 0.242, 0.313, 0.397, 0.203, 0.687, 0.661, 0.19, 1.31,
  0.371, 0.28, 0.299, 0.209, 0.272, 0.276, 0.247, 0.241, 0.409, 0.353, 0.291, 0.377, 0.193, 0.17, 0.198, 0.221,
  0.235, 0.331, 0.97, 0.184, 0.228, 0.276, 0.753, 0.27, 0.21, 0.265, 0.138, 0.237, 0.204, 0.264, 0.081,
];

// The main job's 141 SFT losses on models/crucible-base (`deno task bench train`, lavapipe, 2026-11-28, when the rise
// was 3 nats: steps 6 and 12 were rolled back, their losses kept here), rounded to 3 decimals.
// deno-fmt-ignore
const BASE_JOB_SFT = [
  0.168, 0.145, 0.023, 0.021, 0.021, 3.417, 0.859, 0.034, 0.91, 0.217, 0.792, 3.85, 0.072, 0.032, 0.38, 0.012, 0.348,
  0.065, 0.084, 0.048, 0.179, 0.071, 0.054, 0.302, 0.054, 0.068, 0.073, 0.058, 0.064, 0.296, 0.182, 0.057, 0.304,
  0.032, 0.041, 0.058, 0.041, 0.294, 0.105, 0.031, 0.057, 0.018, 0.231, 0.014, 0.022, 0.119, 0.038, 0.018, 0.01, 0.18,
  0.244, 0.032, 0.311, 0.031, 0.097, 0.049, 0.161, 0.029, 0.045, 0.035, 0.163, 0.048, 0.051, 0.191, 0.33, 0.064,
  0.009, 0.023, 0.294, 0.079, 0.021, 0.024, 0.03, 0.02, 0.242, 0.089, 0.013, 0.043, 0.031, 0.167, 0.05, 1.039, 0.031,
  0.018, 0.011, 0.023, 0.046, 0.013, 0.052, 0.025, 0.05, 0.26, 0.08, 0.011, 0.021, 0.032, 0.066, 0.028, 0.081, 0.16,
  0.039, 0.019, 0.178, 0.03, 0.041, 0.02, 0.026, 0.403, 0.022, 0.027, 0.048, 0.138, 0.017, 0.107, 0.015, 0.279, 0.017,
  0.066, 0.081, 0.03, 0.015, 1.239, 0.047, 0.034, 0.399, 0.117, 0.02, 0.069, 0.025, 0.09, 0.022, 0.024, 0.045, 0.024,
  0.033, 0.009, 0.029, 0.007, 0.02, 0.642, 0.009,
];

Deno.test("the main job's healthy SFT losses are no spike under SFT's settings; a step towards uniform is", async () => {
  const { trainer } = resolveConfig(await configSource("textcraft"));
  assert.equal(trainer.loss_spike_factor, 5);
  const rise = trainer.loss_spike_rise;
  const replay = (losses: number[], minRise: number, at?: [number, number]) => {
    const s = new SpikeCheck(trainer.loss_spike_factor, { name: "loss", minRise });
    const spikes: number[] = [];
    losses.forEach((loss, i) => {
      const v = at && at[0] === i ? at[1] : loss;
      if (s.test(v)) spikes.push(i + 1);
      else s.accept(v);
    });
    return spikes;
  };
  assert.deepEqual(replay(MAIN_JOB_SFT, rise), [], "no healthy step is rolled back");
  assert.deepEqual(replay(BASE_JOB_SFT, rise), [], "nor on the new base, whose hard batches stand out more");
  // A rise of 1 nat, the first setting, took the main job's hard batches for spikes (the run stopped at step 41), and
  // a rise of 3 the new base's.
  assert.deepEqual(replay(MAIN_JOB_SFT, 1).slice(0, 4), [8, 11, 31, 41]);
  assert.deepEqual(replay(BASE_JOB_SFT, 3), [6, 12]);
  assert.deepEqual(replay(MAIN_JOB_SFT, rise, [60, 7.6]), [61], "a loss at the uniform 7.6 nats is a spike");
  assert.deepEqual(replay(BASE_JOB_SFT, rise, [60, 5.5]), [61], "and so is 5.5 over the new base's 0.07");
});
