import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { headPass } from "../../src/model/head.ts";
import { aggregationWeights } from "../../src/rl/aggregation.ts";
import { POLICY_STATS, policyLossForward, uploadPolicyInputs } from "../../src/ops/policy_loss.ts";
import type { Tensor } from "../../src/gpu/tensor.ts";
import { POLICY_LOSSES } from "../../src/rl/policy_losses.ts";
import { policyLossHead } from "../../src/update/policy_head.ts";
import { policyObjective, type PolicyTokens, type ResolvedPolicyLoss } from "../../src/rl/policy_loss.ts";
import { lossOf } from "../rl/loss_settings.ts";
import { assertClose } from "../reference/check.ts";
import { intArray, roundF32, uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { checkOp, type HostArrays, type OpInput } from "./check_op.ts";

// Elementwise f32 with one exp per token (WGSL exp: a few ulps, up to ~40 at |Δ| = 20, i.e. < 3e-6 relative).
// Gradients and weighted terms scale with w ≈ 1/200, so atol 1e-7 is still tight; indicators and masked zeros
// must match exactly (no token lies within 1e-4 of a clip boundary, checked below).
const TOL = { atol: 1e-7, rtol: 1e-5 };
const S = POLICY_STATS.length;

/** T tokens in rows of 25, a quarter masked with garbage inputs, covering every branch of the surrogate. */
function inputs(seed: number, T: number): Record<keyof PolicyTokens, Float64Array> & { masks: number[][] } {
  const logp = roundF32(uniformArray(seed, T, -3, -0.01));
  const delta = uniformArray(seed + 1, T, -1.6, 1.6);
  delta[5] = 25; // clamped log-ratio, A > 0: clipped
  delta[6] = -25; // clamped, unclipped but zero gradient
  const advantages = roundF32(uniformArray(seed + 2, T, -2, 2));
  advantages[5] = advantages[6] = 1.5;
  const masks: number[][] = [];
  for (let t = 0; t < T; t += 25) {
    masks.push(Array.from({ length: Math.min(25, T - t) }, (_, i) => ((t + i) % 4 === 3 ? 0 : 1)));
  }
  const x = {
    logp,
    entropy: roundF32(uniformArray(seed + 3, T, 0, 4)),
    oldLogp: roundF32(Float64Array.from(delta, (d, t) => logp[t] - d)),
    refLogp: roundF32(Float64Array.from(uniformArray(seed + 4, T, -1.5, 1.5), (d, t) => logp[t] - d)),
    advantages,
    weights: roundF32(aggregationWeights(masks, "seq-mean-token-mean").flat()),
    masks,
  };
  // k3 clamps: ref − logp = 3.5 (outer clamp), 25 (both clamps), −25 (inner clamp, then outer).
  [[8, 3.5], [9, 25], [10, -25]].forEach(([t, u]) => x.refLogp[t] = Math.fround(logp[t] + u));
  for (let t = 3; t < T; t += 4) {
    // Garbage a masked token may carry (observation logp of a padded position, unset inputs).
    [x.logp[t], x.entropy[t], x.oldLogp[t], x.refLogp[t], x.advantages[t]] = [-Infinity, NaN, NaN, Infinity, NaN];
  }
  return x;
}

/** Asserts the CPU statistics contain every case the kernel must get right, away from boundaries. */
function checkCoverage(x: PolicyTokens, stats: Float64Array, loss: ResolvedPolicyLoss): void {
  const settings = loss.settings;
  const T = x.weights.length;
  const count = (col: number) => [...Array(T).keys()].filter((t) => stats[t * S + col] === 1).length;
  const live = [...Array(T).keys()].filter((t) => x.weights[t] !== 0);
  const free = live.filter((t) => stats[t * S + 3] === 0 && stats[t * S + 4] === 0).length;
  assert.ok(count(3) >= 5 && count(4) >= 3 && free >= 20, `clipped ${count(3)}, dual ${count(4)}, free ${free}`);
  for (const t of live) {
    const rho = stats[t * S + 5], a = Math.abs(x.advantages[t]);
    const bounds = [1 - settings.clipLow, 1 + settings.clipHigh, settings.clipC];
    for (const b of bounds) assert.ok(Math.abs(rho - b) > 1e-4 || a === 0, `token ${t} ratio ${rho} sits on ${b}`);
  }
}

const SETTINGS: ResolvedPolicyLoss[] = [
  lossOf({ klKind: "low_var_kl", klCoef: 1e-3, entropyCoef: 0.01, clipHigh: 0.28 }),
  lossOf({ klKind: "k1+", klCoef: 0.1, clipLow: 0.1, clipC: 2, entropyCoef: 0 }),
  lossOf({ klKind: "abs", klCoef: 0.05, entropyCoef: -0.02 }),
  lossOf({ klKind: "none", klCoef: 0, entropyCoef: 0.001 }),
];

/**
 * checkOp's inputs: logp and entropy [T], and the kernel's per-token inputs [T, 4] laid out as uploadPolicyInputs
 * does (columns POLICY_INPUTS; the head tests below upload through it and compare against the same objective).
 */
function opInputs(x: PolicyTokens): Record<string, OpInput> {
  const T = x.weights.length;
  const cols = [x.oldLogp, x.refLogp, x.advantages, x.weights];
  const inputs = Float64Array.from({ length: 4 * T }, (_, i) => cols[i % 4][Math.floor(i / 4)]);
  return {
    logp: { data: x.logp, shape: [T] },
    entropy: { data: x.entropy, shape: [T] },
    inputs: { data: inputs, shape: [T, 4] },
  };
}

/** The CPU objective's outputs on checkOp's host view of opInputs, named `<output><suffix>`. */
function objective(x: HostArrays, settings: ResolvedPolicyLoss, suffix = ""): Record<string, Float64Array> {
  const col = (c: number) => x.inputs.filter((_, i) => i % 4 === c);
  const tokens = { logp: x.logp, entropy: x.entropy, oldLogp: col(0), refLogp: col(1), advantages: col(2) };
  const ref = policyObjective({ ...tokens, weights: col(3) }, settings);
  return { [`dlogp${suffix}`]: ref.dlogp, [`dentropy${suffix}`]: ref.dentropy, [`stats${suffix}`]: ref.stats };
}

Deno.test({
  name: "fused policy loss: dlogp, dentropy and statistics match the CPU objective, masked tokens exactly 0",
  ignore: noGpu,
  async fn() {
    const T = 203;
    const tokens = inputs(40, T);
    for (const settings of SETTINGS) checkCoverage(tokens, policyObjective(tokens, settings).stats, settings);
    // Every setting in one batch: outputs `dlogp <klKind>`, `dentropy <klKind>`, `stats <klKind>`.
    await checkOp({
      name: "fused policy loss",
      inputs: opInputs(tokens),
      forward(batch, x) {
        const out: Record<string, Tensor> = {};
        for (const settings of SETTINGS) {
          const dlogp = zeros(batch.gpu, [T]), dentropy = zeros(batch.gpu, [T]), stats = zeros(batch.gpu, [T, S]);
          const args = { logp: x.logp, entropy: x.entropy, inputs: x.inputs, dlogp, dentropy, stats };
          policyLossForward(batch, args, settings.kernel);
          const name = settings.settings.klKind;
          Object.assign(out, { [`dlogp ${name}`]: dlogp, [`dentropy ${name}`]: dentropy, [`stats ${name}`]: stats });
        }
        return out;
      },
      reference: (x) => Object.assign({}, ...SETTINGS.map((s) => objective(x, s, ` ${s.settings.klKind}`))),
      tol: TOL,
    });
  },
});

Deno.test({
  name: "policy loss head callback: per-chunk views at 64-row starts fill the whole-batch tensors",
  ignore: noGpu,
  async fn() {
    const T = 150, settings = SETTINGS[0];
    await checkOp({
      name: "policy loss head in chunks",
      inputs: opInputs(inputs(50, T)),
      forward(batch, x) {
        const head = policyLossHead(batch.gpu, x.inputs, settings);
        for (const [start, count] of [[0, 64], [64, 64], [128, 22]]) {
          const chunk = { start, count, logp: x.logp.view(start, [count]), entropy: x.entropy.view(start, [count]) };
          const g = head.grad(batch, chunk);
          assert.deepEqual(g.dlogp.shape, [count]);
        }
        const outside = { start: 10, count: 5, logp: x.logp, entropy: x.entropy };
        assert.throws(() => head.grad(batch, outside), RangeError);
        return { dlogp: head.dlogp, dentropy: head.dentropy, stats: head.stats }; // checkOp releases them
      },
      reference: (x) => objective(x, settings),
      tol: TOL,
    });
  },
});

// Stays beside checkOp: the kernel's logp and entropy come out of the head pass on the GPU, and the reference is the
// objective on those GPU values (checkOp's reference sees only the uploaded inputs).
Deno.test({
  name: "policy loss head inside the model's chunked head pass: gradients from the pass's own logp",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const T = 70, C = 8, V = 40, settings = SETTINGS[2];
    const x = inputs(60, T);
    const nf = fromHost(gpu, uniformArray(61, T * C), [T, C]);
    const w = fromHost(gpu, uniformArray(62, V * C), [V, C]);
    const targets = fromHost(gpu, intArray(63, T, V), [T], "u32");
    const tin = uploadPolicyInputs(gpu, x);
    const loss = policyLossHead(gpu, tin, settings);
    const logp = zeros(gpu, [T]), entropy = zeros(gpu, [T]), dnf = zeros(gpu, [T, C]), dHead = zeros(gpu, [V, C]);
    const batch = new Batch(gpu);
    headPass(batch, { nf, head: w, targets, logp, entropy, grad: loss.grad, dnf, dHead, temperature: 0.7 });
    const [gl, ge, dl, de, gs] = await batch.read([logp, entropy, loss.dlogp, loss.dentropy, loss.stats]);
    // The kernel saw the pass's logp and entropy: the CPU objective on those (as f32) must agree.
    const ref = policyObjective({ ...x, logp: gl, entropy: ge }, settings);
    assertClose("dlogp", dl, ref.dlogp, TOL);
    assertClose("dentropy", de, ref.dentropy, TOL);
    assertClose("stats", gs, ref.stats, TOL);
    loss.release();
    for (const t of [nf, w, targets, tin, logp, entropy, dnf, dHead]) t.release();
  },
});

Deno.test({
  name: "policy loss head runs the configured loss's kernel: a loss registered by name is the one recorded",
  ignore: noGpu,
  async fn() {
    const T = 64, tokens = inputs(70, T);
    let calls = 0;
    // vanilla's kernel, counted: the head must reach it through the registry by the settings' name.
    POLICY_LOSSES.register({
      ...POLICY_LOSSES.get("vanilla"),
      name: "test_counted",
      kernel: (batch, args, k) => {
        calls++;
        policyLossForward(batch, args, k);
      },
    });
    try {
      await checkOp({
        name: "policy loss by name",
        inputs: opInputs(tokens),
        forward(batch, x) {
          const head = policyLossHead(batch.gpu, x.inputs, lossOf({ ...SETTINGS[0].settings, loss: "test_counted" }));
          head.grad(batch, { start: 0, count: T, logp: x.logp, entropy: x.entropy });
          return { dlogp: head.dlogp, dentropy: head.dentropy, stats: head.stats };
        },
        reference: (x) => objective(x, SETTINGS[0]),
        tol: TOL,
      });
      assert.equal(calls, 1);
      // The name is looked up once, when the step resolves its settings, before anything is recorded.
      assert.throws(() => lossOf({ loss: "test_missing" }), /Unknown policy loss "test_missing"/);
    } finally {
      POLICY_LOSSES.unregister("test_counted");
    }
  },
});
