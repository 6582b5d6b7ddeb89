// The fused DPO loss against its f64 reference (src/rl/dpo.ts's dpoLoss and dpoLogitGrad through
// tests/reference/dpo_loss.ts), its gradient against finite differences, for every loss type; spans of awkward lengths
// (1, one workgroup, one more, several), masked positions holding garbage, saturated sigmoids; and the input checks.
import assert from "node:assert/strict";
import { zeros } from "../../src/gpu/tensor.ts";
import {
  DPO_LOSS_CODES,
  DPO_STATS,
  type DpoInputs,
  dpoLossForward,
  type PairSpan,
  uploadDpoInputs,
} from "../../src/ops/dpo_loss.ts";
import type { DpoOptions } from "../../src/rl/dpo.ts";
import { dpoLossRef } from "../reference/dpo_loss.ts";
import { roundF32, uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { checkOp, type HostArrays, type OpInput } from "./check_op.ts";

const S = DPO_STATS.length;
// f32 sums over up to 150 positions of logp in [-4, 0]: |s| up to ~400, so the sums hold ~1e-4 of absolute error.
const TOL = { stats: { atol: 3e-4, rtol: 2e-5 }, dlogp: { atol: 1e-7, rtol: 1e-4 } };

/** Pair lengths (chosen, rejected): one position, a workgroup's 64 and one more, long ones. */
const LENGTHS: [number, number][] = [[1, 37], [64, 65], [150, 3], [20, 129], [7, 7], [90, 40]];

/** A micro-batch of the pairs above packed as the update packs them (c0, r0, c1, r1, ...), ~40% of positions masked. */
function microBatch(seed: number, average: boolean, garbage = false) {
  const spans: PairSpan[] = [];
  let at = 0;
  for (const [c, r] of LENGTHS) {
    spans.push({ chosen: [at, c], rejected: [at + c, r] });
    at += c + r;
  }
  const T = at;
  const logp = roundF32(uniformArray(seed, T, -4, -0.01));
  const keep = uniformArray(seed + 1, T, 0, 1);
  const weights = new Float64Array(T);
  for (const s of spans) {
    for (const [start, length] of [s.chosen, s.rejected]) {
      const trained = Array.from({ length }, (_, i) => keep[start + i] < 0.6 || i === 0);
      const n = trained.filter(Boolean).length;
      trained.forEach((t, i) => (weights[start + i] = t ? (average ? Math.fround(1 / n) : 1) : 0));
    }
  }
  // Garbage a masked position may hold (the last position of a sequence scores nothing).
  if (garbage) { for (let t = 0; t < T; t++) if (weights[t] === 0 && t % 3 === 0) logp[t] = t % 2 ? -Infinity : NaN; }
  const x = { logp, weights, spans: spans.flatMap((s) => [...s.chosen, ...s.rejected]), reference: [] as number[] };
  // The reference's log-probabilities: the policy's moved by a margin, so that βz runs from saturated to small.
  const margins = uniformArray(seed + 2, LENGTHS.length, -8, 8);
  margins[2] = 400; // βz far out: σ saturates, the hinge is flat
  const own = dpoLossRef({ ...x, reference: new Float64Array(2 * LENGTHS.length) }, { scale: 1 }).stats;
  x.reference = LENGTHS.flatMap((_, p) =>
    [own[p * S + 3] - margins[p] / 2, own[p * S + 4] + margins[p] / 2].map(Math.fround)
  );
  return { x, spans, T };
}

function opInputs(x: ReturnType<typeof microBatch>["x"]): Record<string, OpInput> {
  const P = LENGTHS.length;
  return {
    logp: { data: x.logp, shape: [x.logp.length] },
    weights: { data: x.weights, shape: [x.weights.length] },
    spans: { data: x.spans, shape: [P, 4], dtype: "u32" },
    reference: { data: x.reference, shape: [P, 2] },
  };
}

/** checkOp's host view as the reference takes it. */
function asRef(h: HostArrays) {
  return { logp: h.logp, weights: h.weights, spans: h.spans, reference: h.reference };
}

/** The sigmoid loss at TRL's defaults, as the kernel takes it. */
const KERNEL = { lossCode: DPO_LOSS_CODES.sigmoid, beta: 0.1, labelSmoothing: 0 };

const CASES: (DpoOptions & { average?: boolean })[] = [
  { lossType: "sigmoid" },
  { lossType: "sigmoid", beta: 0.5, labelSmoothing: 0.15 },
  { lossType: "ipo", beta: 0.1, average: true },
  { lossType: "hinge", beta: 0.2 },
];

for (const c of CASES) {
  Deno.test({
    name: `fused DPO loss, ${
      JSON.stringify(c)
    }: losses, rewards, log-probs and dlogp match dpoLoss and finite differences`,
    ignore: noGpu,
    async fn() {
      const { x, T } = microBatch(11, c.average ?? false);
      const P = LENGTHS.length, scale = 1 / 8;
      const o = { beta: c.beta, lossType: c.lossType, labelSmoothing: c.labelSmoothing, scale };
      // The data must reach every branch and keep away from the hinge's kink.
      const z = dpoLossRef(x, o).logits, b = c.beta ?? 0.1;
      assert.ok(z.some((v) => b * v > 20) && z.some((v) => b * v < 0), `βz ${z.map((v) => b * v)}`);
      for (const v of z) assert.ok(Math.abs(1 - b * v) > 1e-3, `βz ${b * v} sits on the hinge`);
      await checkOp({
        name: `dpo_loss ${c.lossType}`,
        inputs: opInputs(x),
        forward(batch, t) {
          const dlogp = zeros(batch.gpu, [T]), stats = zeros(batch.gpu, [P, S]);
          const inputs: DpoInputs = { weights: t.weights, spans: t.spans, reference: t.reference, release() {} };
          dpoLossForward(batch, { logp: t.logp, inputs, dlogp, stats }, {
            lossCode: DPO_LOSS_CODES[c.lossType ?? "sigmoid"],
            beta: b,
            labelSmoothing: c.labelSmoothing ?? 0,
            scale,
          });
          return { stats, dlogp };
        },
        reference: (h) => {
          const r = dpoLossRef(asRef(h), o);
          return { stats: r.stats, dlogp: r.dlogp };
        },
        backward: {
          // The kernel's dlogp is the gradient of scale · Σ loss: the upstream of each pair's loss column.
          upstream: { stats: Array.from({ length: P * S }, (_, i) => (i % S === 0 ? scale : 0)) },
          gpu: (_batch, _x, _dy, y) => ({ logp: y.dlogp }),
          reference: (h) => ({ logp: dpoLossRef(asRef(h), o).dlogp }),
          probes: 40,
        },
        // The output dlogp and the gradient of the input logp (checkOp's `dlogp`) share one tolerance.
        tol: TOL,
      });
    },
  });
}

Deno.test({
  name: "fused DPO loss: NaN and -Infinity on masked positions never reach a loss, a reward or a gradient",
  ignore: noGpu,
  async fn() {
    const { x, T } = microBatch(21, false, true);
    assert.ok(x.logp.some(Number.isNaN) && x.logp.includes(-Infinity));
    const P = LENGTHS.length, o = { scale: 1 / 8 };
    await checkOp({
      name: "dpo_loss with garbage",
      inputs: opInputs(x),
      forward(batch, t) {
        const dlogp = zeros(batch.gpu, [T]), stats = zeros(batch.gpu, [P, S]);
        const inputs: DpoInputs = { weights: t.weights, spans: t.spans, reference: t.reference, release() {} };
        dpoLossForward(batch, { logp: t.logp, inputs, dlogp, stats }, { ...KERNEL, ...o });
        return { stats, dlogp };
      },
      reference: (h) => {
        const r = dpoLossRef(asRef(h), o);
        return { stats: r.stats, dlogp: r.dlogp };
      },
      tol: TOL,
    });
  },
});

Deno.test({
  name: "DPO inputs: spans must tile the positions, and the reference must hold two values a pair",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const one = (spans: PairSpan[], T: number, reference = [0, 0]) =>
      uploadDpoInputs(gpu, { weights: new Float32Array(T), spans, reference });
    assert.throws(() => one([{ chosen: [0, 2], rejected: [1, 2] }], 3), /overlap at position 1/);
    assert.throws(() => one([{ chosen: [0, 2], rejected: [3, 2] }], 5), /position 2 of 5 uncovered/);
    assert.throws(() => one([{ chosen: [0, 2], rejected: [2, 4] }], 5), /outside the 5 positions/);
    assert.throws(() => one([{ chosen: [0, 2], rejected: [2, 2] }], 4, [0]), /1 values for 1 pairs/);
    assert.throws(() => one([], 0, []), /at least one pair/);
    const ok = one([{ chosen: [2, 2], rejected: [0, 2] }], 4);
    assert.deepEqual(ok.spans.shape, [1, 4]);
    ok.release();
  },
});
