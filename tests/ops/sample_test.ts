/**
 * The token sampler against its f64 reference (tests/reference/sample.ts). Where nothing rounds (equal logits,
 * dyadic uniforms) the ids are a deterministic function of the inputs and go through checkOp with their log-probs.
 * Everywhere else the drawn token is a decision on f32 sums: the GPU may take the reference's neighbour where the
 * reference's closest decision lies within float rounding of its boundary (MARGIN), and its log-prob is then
 * compared at the GPU's own id. checkOp compares outputs with a reference of the inputs alone, element by element,
 * so those checks (ids within margins, log-probs at the GPU's ids, untouched inactive rows, two runs identical)
 * stay here.
 */
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import type { Gpu } from "../../src/gpu/device.ts";
import { Rng } from "../../src/util/random.ts";
import { fromHost, type Tensor, zeros } from "../../src/gpu/tensor.ts";
import {
  drawUniforms,
  pickSampleWorkgroup,
  sample,
  SAMPLE_WORKGROUPS,
  sampleLoopSteps,
  type SampleSettings,
} from "../../src/ops/sample.ts";
import { LOOP_BUDGET } from "../../src/ops/wgsl.ts";
import { assertClose } from "../reference/check.ts";
import { logprobRef, sampleRef } from "../reference/sample.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

/**
 * A GPU token may differ from the reference's only where the reference's closest decision (u · keptMass, or
 * topP · mass, against a cumulative boundary) lies within this fraction of the mass: the rounding of the f32
 * sums. In a stress run of 6912 rows (V 4099 and 32768, flat and peaked logits) the two GPU tokens that differed
 * had margins of 5.7e-8 and 6.2e-10, both the reference's neighbour.
 */
const MARGIN = 1e-6;
/**
 * logprob = (z_id - z_max) / T - log(sum) in f32: a few ulps of the result (an f32 ulp at |logprob| = 10 is 9.5e-7).
 * Largest errors seen: 1.8e-6 absolute, 1.6e-6 relative.
 */
const LOGPROB_TOL = { atol: 5e-6, rtol: 1e-6 };
const EXACT = { atol: 0, rtol: 0 };

const MODES: [string, SampleSettings][] = [
  ["greedy", { temperature: 0 }],
  ["temperature", { temperature: 0.8 }],
  ["top-k", { temperature: 1, topK: 40 }],
  ["top-p", { temperature: 1.2, topP: 0.9 }],
  ["top-k+top-p", { temperature: 0.7, topK: 200, topP: 0.8 }],
];

/**
 * Logit rows of four kinds, f32-exact: normal (sd 3, like a language model's), uniform in [-4, 4], normal rounded
 * to 0.5 (many ties at every threshold), and normal with a quarter of the tokens masked to -inf.
 */
function makeLogits(seed: number, N: number, V: number): Float32Array {
  const rng = new Rng(seed);
  const out = new Float32Array(N * V);
  for (let r = 0; r < N; r++) {
    const kind = r % 4;
    for (let i = 0; i < V; i++) {
      const x = kind === 1 ? rng.uniform(-4, 4) : 3 * rng.normal();
      out[r * V + i] = kind === 2 ? Math.round(2 * x) / 2 : kind === 3 && rng.float() < 0.25 ? -Infinity : x;
    }
  }
  return out;
}

interface Outcome {
  rows: number;
  mismatches: number;
  smallestMismatchMargin: number;
}

/** Compares GPU ids with the reference (mismatches only within MARGIN) and logprobs of the GPU's ids. */
function check(
  what: string,
  logits: Float32Array,
  V: number,
  u: Float32Array,
  settings: SampleSettings,
  ids: Uint32Array,
  logprob: Float32Array,
  outcome: Outcome,
): void {
  const N = u.length;
  const ref = sampleRef(logits, N, V, u, settings);
  const expected = new Float64Array(N);
  for (let r = 0; r < N; r++) {
    const row = logits.subarray(r * V, (r + 1) * V);
    outcome.rows++;
    if (ids[r] !== ref[r].id) {
      outcome.mismatches++;
      outcome.smallestMismatchMargin = Math.min(outcome.smallestMismatchMargin, ref[r].margin);
      assert.ok(
        ref[r].margin < MARGIN && ids[r] < V,
        `${what} row ${r}: GPU drew ${ids[r]}, reference ${ref[r].id}, and the reference's closest decision is ` +
          `${ref[r].margin} of the mass from its boundary (only < ${MARGIN} may differ)`,
      );
    } else {
      assert.ok(ref[r].kept[ids[r]], `${what} row ${r}: token ${ids[r]} was filtered out`);
    }
    expected[r] = logprobRef(row, ids[r], settings.temperature);
  }
  assertClose(`${what} logprob`, logprob, expected, LOGPROB_TOL);
}

/**
 * Samples every mode at every workgroup size on one set of rows in one batch and one readback; checks each against
 * the reference.
 */
async function runModes(gpu: Gpu, seed: number, N: number, V: number, outcome: Outcome): Promise<void> {
  const logits = makeLogits(seed, N, V);
  const u = drawUniforms(new Rng(seed + 1000), N);
  const tl = fromHost(gpu, logits, [N, V]);
  const tu = fromHost(gpu, u, [N]);
  const outs: Tensor[] = [];
  // Every workgroup size whose loops fit llvmpipe's budget at this V (all of them on a real GPU).
  const sizes = SAMPLE_WORKGROUPS.filter((w) => !gpu.software || sampleLoopSteps(V, w) <= LOOP_BUDGET);
  const runs = sizes.flatMap((workgroup) => MODES.map(([name, settings]) => ({ workgroup, name, settings })));
  const batch = new Batch(gpu);
  for (const { workgroup, settings } of runs) {
    const ids = zeros(gpu, [N], "u32");
    const logprob = zeros(gpu, [N]);
    sample(batch, { logits: tl, uniform: tu, ids, logprob, ...settings, workgroup });
    outs.push(ids, logprob);
  }
  const got = await batch.read(outs);
  runs.forEach(({ workgroup, name, settings }, m) => {
    const what = `V=${V} seed=${seed} ${name} workgroup ${workgroup}`;
    check(what, logits, V, u, settings, got[2 * m] as Uint32Array, got[2 * m + 1] as Float32Array, outcome);
  });
  for (const t of [tl, tu, ...outs]) t.release();
}

function report(name: string, o: Outcome): void {
  console.log(
    `${name}: ${o.rows} rows, ${o.mismatches} within float rounding of a boundary` +
      (o.mismatches ? ` (smallest margin ${o.smallestMismatchMargin.toExponential(2)})` : ""),
  );
  // Boundary cases must stay rare, or the test would not be checking anything.
  assert.ok(o.mismatches <= Math.max(1, o.rows / 200), `${name}: ${o.mismatches} mismatches in ${o.rows} rows`);
}

Deno.test({
  name: "sample matches the f64 reference exactly in ids, for vocabularies of 37, 1000 and 4099, every mode",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const outcome: Outcome = { rows: 0, mismatches: 0, smallestMismatchMargin: Infinity };
    for (const V of [37, 1000, 4099]) {
      for (const seed of [1, 2, 3]) await runModes(gpu, seed * 10 + V, 64, V, outcome);
    }
    report("V 37 / 1000 / 4099", outcome);
  },
});

Deno.test({
  name: "sample matches the f64 reference on a Qwen-sized vocabulary (151936), every mode",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const outcome: Outcome = { rows: 0, mismatches: 0, smallestMismatchMargin: Infinity };
    await runModes(gpu, 7, 8, 151936, outcome);
    report("V 151936", outcome);
  },
});

Deno.test({
  name: "sample puts exact CDF boundaries where the reference does: the first cumulative mass above u · mass",
  ignore: noGpu,
  async fn() {
    // Equal logits (weights exactly 1, sums exact in f32), every third token masked to -inf in odd rows, and
    // dyadic u (u · mass exact in f32): no rounding anywhere, so ids must agree exactly and go through checkOp.
    const V = 1000;
    const us = [0, 0.125, 0.25, 0.5, 0.75, 1023 / 1024, 0.5, 0.1875, 0.875, 1 - 2 ** -24];
    const N = us.length;
    const logits = new Float32Array(N * V).map((_, i) =>
      (Math.floor(i / V) % 2 === 1 && i % 3 === 0) ? -Infinity : 1.5
    );
    const modes: SampleSettings[] = [{ temperature: 1 }, { temperature: 0.5, topK: 7 }, { temperature: 2, topP: 0.3 }];
    const runs = modes.flatMap((settings) =>
      SAMPLE_WORKGROUPS.map((workgroup) => ({
        settings,
        workgroup,
        name: `${JSON.stringify(settings)} wg${workgroup}`,
      }))
    );
    // Every setting at every workgroup size in one batch: outputs `ids <run>` (exact) and `logprob <run>`.
    await checkOp({
      name: "sample exact boundaries",
      inputs: { logits: { data: logits, shape: [N, V] }, uniform: { data: us, shape: [N] } },
      forward(batch, x) {
        const out: Record<string, Tensor> = {};
        for (const { settings, workgroup, name } of runs) {
          const ids = zeros(batch.gpu, [N], "u32"), logprob = zeros(batch.gpu, [N]);
          sample(batch, { logits: x.logits, uniform: x.uniform, ids, logprob, ...settings, workgroup });
          Object.assign(out, { [`ids ${name}`]: ids, [`logprob ${name}`]: logprob });
        }
        return out;
      },
      reference(x) {
        return Object.fromEntries(runs.flatMap(({ settings, name }) => {
          const ref = sampleRef(x.logits, N, V, x.uniform, settings);
          return [[`ids ${name}`, ref.map((r) => r.id)], [`logprob ${name}`, ref.map((r) => r.logprob)]];
        }));
      },
      tol: Object.fromEntries(runs.flatMap(({ name }) => [[`ids ${name}`, EXACT], [`logprob ${name}`, LOGPROB_TOL]])),
    });
  },
});

Deno.test({
  name: "sample is deterministic: the same logits and uniforms give the same ids and logprobs twice",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const N = 32, V = 4099;
    const tl = fromHost(gpu, makeLogits(99, N, V), [N, V]);
    const tu = fromHost(gpu, drawUniforms(new Rng(5), N), [N]);
    const runs = [];
    for (let k = 0; k < 2; k++) {
      const ids = zeros(gpu, [N], "u32");
      const logprob = zeros(gpu, [N]);
      const batch = new Batch(gpu);
      sample(batch, { logits: tl, uniform: tu, ids, logprob, temperature: 1.3, topK: 500, topP: 0.95 });
      runs.push(await batch.read([ids, logprob]));
      ids.release();
      logprob.release();
    }
    assert.deepEqual([...runs[0][0]], [...runs[1][0]]);
    assert.deepEqual([...runs[0][1]], [...runs[1][1]]);
    tl.release();
    tu.release();
  },
});

Deno.test({
  name: "sample leaves inactive rows untouched and writes ids through a view of a larger token buffer",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const N = 12, V = 1000, at = 64;
    const logits = makeLogits(11, N, V);
    const u = drawUniforms(new Rng(12), N);
    const mask = Uint32Array.from({ length: N }, (_, r) => r % 3 === 1 ? 0 : 1);
    const tokens = fromHost(gpu, new Uint32Array(at + N).fill(7777), [at + N], "u32");
    const logprob = fromHost(gpu, new Float32Array(N).fill(-123), [N]);
    const tl = fromHost(gpu, logits, [N, V]);
    const tu = fromHost(gpu, u, [N]);
    const active = fromHost(gpu, mask, [N], "u32");
    const settings: SampleSettings = { temperature: 0.9, topK: 50, topP: 0.9 };
    const batch = new Batch(gpu);
    sample(batch, { logits: tl, uniform: tu, ids: tokens.view(at, [N]), logprob, active, ...settings });
    const [allTokens, lp] = await batch.read([tokens, logprob]);
    const ref = sampleRef(logits, N, V, u, settings);
    assert.ok(allTokens.subarray(0, at).every((t) => t === 7777), "tokens before the view were written");
    for (let r = 0; r < N; r++) {
      if (mask[r] === 0) {
        assert.equal(allTokens[at + r], 7777, `inactive row ${r} id was written`);
        assert.equal(lp[r], -123, `inactive row ${r} logprob was written`);
      } else {
        assert.ok(allTokens[at + r] === ref[r].id || ref[r].margin < MARGIN, `active row ${r}`);
        assertClose(`row ${r} logprob`, [lp[r]], [logprobRef(logits.subarray(r * V, (r + 1) * V), ref[r].id, 0.9)], {
          ...LOGPROB_TOL,
        });
      }
    }
    for (const t of [tokens, logprob, tl, tu, active]) t.release();
  },
});

Deno.test({
  name: "sample refuses wrong shapes and out-of-range settings",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const logits = zeros(gpu, [2, 10]);
    const u = zeros(gpu, [2]);
    const ids = zeros(gpu, [2], "u32");
    const lp = zeros(gpu, [2]);
    const batch = new Batch(gpu);
    assert.throws(() => sample(batch, { logits, uniform: u, ids: lp, logprob: lp }), TypeError);
    assert.throws(() => sample(batch, { logits, uniform: zeros(gpu, [3]), ids, logprob: lp }), TypeError);
    assert.throws(() => sample(batch, { logits, uniform: u, ids, logprob: lp, temperature: -1 }), RangeError);
    assert.throws(() => sample(batch, { logits, uniform: u, ids, logprob: lp, topK: 1.5 }), RangeError);
    assert.throws(() => sample(batch, { logits, uniform: u, ids, logprob: lp, topP: 0 }), RangeError);
    assert.throws(() => sample(batch, { logits, uniform: u, ids, logprob: lp, workgroup: 32 }), /16, 64, 256/);
    if (gpu.software) {
      // Qwen's vocabulary: 16 invocations would pass llvmpipe's loop budget (results silently wrong); the pick fits.
      const big = zeros(gpu, [1, 151936]), u1 = zeros(gpu, [1]), id1 = zeros(gpu, [1], "u32"), lp1 = zeros(gpu, [1]);
      const args = { logits: big, uniform: u1, ids: id1, logprob: lp1 };
      assert.throws(() => sample(batch, { ...args, workgroup: 16 }), /loop iterations/);
      assert.equal(pickSampleWorkgroup(gpu, 151936), 256);
      assert.equal(pickSampleWorkgroup(gpu, 1858), 16);
      sample(batch, args);
    }
    await batch.submit();
  },
});
