// Attention's use of the autotuner: candidates and keys, the ranges a timing job builds, the tuned choice taking
// over at the next readback (speeds told), and one real timing. GPUs tune and CPU rasterisers never do, so the
// GPU path runs here on a view of the test device that says it is hardware.
import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import type { Gpu } from "../../src/gpu/device.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { configureTuner } from "../../src/gpu/tuner.ts";
import { ATTENTION_TUNE_PREFIX, attentionBackward, attentionForward, cacheRanges } from "../../src/ops/attention.ts";
import {
  attentionKey,
  backwardCandidates,
  forwardCandidates,
  forwardChoice,
  forwardChoiceName,
  likeRanges,
} from "../../src/ops/attention_tune.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

const DECODE = { T: 4, S: 256, H: 2, KV: 1, D: 8, range: 40, sequences: 4 };

Deno.test("attention tuning: candidates on GPUs only, keys by shape and ranges' kind, choice names both ways", () => {
  const info = { subgroupMinSize: 32, subgroupMaxSize: 32 } as GPUAdapterInfo;
  const hw = { software: false, info, features: { subgroups: true, f16: false, timestamps: true } };
  assert.deepEqual(forwardCandidates({ ...hw, software: true }, DECODE), []);
  assert.deepEqual(backwardCandidates({ ...hw, software: true }, DECODE), []);
  const fwd = forwardCandidates(hw, DECODE);
  assert.deepEqual(fwd.filter((c) => !c.startsWith("reg")), ["row", "tile", "lane1", "split2", "split8"]);
  assert.ok(fwd.some((c) => c.startsWith("reg")), "fixed subgroups: register blocks too");
  const noSub = { ...hw, features: { ...hw.features, subgroups: false } };
  assert.ok(!forwardCandidates(noSub, DECODE).some((c) => c.startsWith("reg")));
  const training = { T: 1024, S: 1024, H: 2, KV: 1, D: 8 };
  assert.ok(!forwardCandidates(hw, training).includes("lane1"), "lane walks one query's own keys: decoding only");
  assert.ok(backwardCandidates(hw, training).includes("tile"));
  assert.match(
    attentionKey(ATTENTION_TUNE_PREFIX, DECODE, false, "f16"),
    /^attention@\w+ fwd f16 T4 S256 H2 KV1 D8 decode L64 n4$/,
  );
  assert.match(
    attentionKey(ATTENTION_TUNE_PREFIX, { ...training, T: 1000 }, true),
    /^attention@\w+ bwd f32 T1024 S1024 H2 KV1 D8 all$/,
  );
  assert.deepEqual(forwardChoice("split8"), { variant: "row", splits: 8 });
  assert.deepEqual(forwardChoice("reg3x2"), { variant: "reg3x2", splits: 1 });
  assert.equal(forwardChoiceName({ variant: "tile", splits: 1 }), "tile");
  assert.equal(forwardChoiceName({ variant: "tile", splits: 4 }), "split4");
});

Deno.test("a timing job's ranges: decode queries in their own slots, packed causal sequences, a prefill's prefix", () => {
  const d = likeRanges(DECODE);
  assert.deepEqual([...d.kvStart], [0, 64, 128, 192]);
  assert.deepEqual([...d.kvEnd], [40, 104, 168, 232]);
  const p = likeRanges({ T: 600, S: 600, H: 1, KV: 1, D: 4 });
  assert.deepEqual([p.kvStart[0], p.kvEnd[0], p.kvStart[511], p.kvEnd[511]], [0, 1, 0, 512]);
  assert.deepEqual([p.kvStart[512], p.kvEnd[599], p.qEnd[0]], [512, 600, 512]);
  const prefill = likeRanges({ T: 3, S: 10, H: 1, KV: 1, D: 4 });
  assert.deepEqual([...prefill.kvEnd], [8, 9, 10]);
});

/** The test device, seen as a hardware adapter (the tuner's and the picks' view of it). */
async function hardwareView(): Promise<Gpu> {
  return { ...(await testGpu()), software: false };
}

Deno.test({
  name: "a decode forward runs its seed, then the told-fastest choice after the readback; never tuned on lavapipe",
  ignore: noGpu,
  async fn() {
    const view = await hardwareView();
    const { T, S, H, KV, D } = DECODE;
    const q = zeros(view, [T, H, D]), k = zeros(view, [S, KV, D]), v = zeros(view, [S, KV, D]);
    const r = cacheRanges([0, 1, 2, 3], [39, 39, 39, 39], 64);
    const kvStart = fromHost(view, r.kvStart, [T], "u32"), kvEnd = fromHost(view, r.kvEnd, [T], "u32");
    const o = zeros(view, [T, H, D]), lse = zeros(view, [T, H]);
    const args = { q, k, v, kvStart, kvEnd, o, lse, ranges: { longest: 40, starts: 4 } };
    try {
      // Software: nothing filed even in mode on (the seeds are measured, other shapes change the bits).
      const software = await testGpu();
      const soft = configureTuner(software, { mode: "on", cachePath: null, timer: () => Promise.resolve(1) });
      const b0 = new Batch(software);
      attentionForward(b0, args);
      assert.equal(soft.pending, 0);
      await b0.submit();
      // Hardware: the seed is pickSplits' 4 chunks (two dispatches); "tile" is told fastest (one dispatch).
      const timer = (c: string) => Promise.resolve(c === "tile" ? 1 : 2);
      const hw = configureTuner(view, { mode: "on", cachePath: null, timer, log: null });
      const first = new Batch(view);
      attentionForward(first, args);
      assert.equal(first.dispatches, 2, "the seed: a split forward and its combine");
      assert.equal(hw.pending, 1);
      await first.read([lse]);
      assert.equal(
        hw.choice(attentionKey(ATTENTION_TUNE_PREFIX, { T, S, H, KV, D, range: 40, sequences: 4 }, false)),
        "tile",
      );
      const second = new Batch(view);
      attentionForward(second, args);
      assert.equal(second.dispatches, 1, "the tuned single-pass tile kernel");
      await second.submit();
    } finally {
      configureTuner(await testGpu(), { mode: "off" });
      for (const t of [q, k, v, kvStart, kvEnd, o, lse]) t.release();
    }
  },
});

Deno.test({
  name: "timing an attention shape on this adapter runs every GPU candidate, forward and backward, and keeps one",
  ignore: noGpu,
  async fn() {
    const view = await hardwareView();
    const { T, H, KV, D } = { T: 48, H: 2, KV: 1, D: 8 };
    const t = (shape: number[]) => zeros(view, shape);
    const r = likeRanges({ T, S: T, H, KV, D });
    const u32 = (x: Uint32Array) => fromHost(view, x, [T], "u32");
    const base = { q: t([T, H, D]), k: t([T, KV, D]), v: t([T, KV, D]), kvStart: u32(r.kvStart), kvEnd: u32(r.kvEnd) };
    const o = t([T, H, D]), lse = t([T, H]), dO = t([T, H, D]);
    const grads = { dq: t([T, H, D]), dk: t([T, KV, D]), dv: t([T, KV, D]) };
    const qRanges = { qStart: u32(r.qStart), qEnd: u32(r.qEnd) };
    try {
      const tuner = configureTuner(view, { mode: "on", cachePath: null, log: null });
      const batch = new Batch(view);
      attentionForward(batch, { ...base, o, lse });
      attentionBackward(batch, { ...base, ...qRanges, o, lse, dO, ...grads });
      await batch.read([lse]);
      const keys = Object.keys(tuner.choices).map((k) => k.split(" ")[1]).sort();
      assert.deepEqual(keys, ["bwd", "fwd"]);
      for (const c of Object.values(tuner.choices)) {
        assert.ok(Object.keys(c.ms).includes(c.variant));
        assert.ok(Object.values(c.ms).every((ms) => Number.isFinite(ms) && ms > 0), JSON.stringify(c.ms));
        assert.ok(Object.keys(c.ms).length >= 3, JSON.stringify(c.ms));
      }
    } finally {
      configureTuner(await testGpu(), { mode: "off" });
      for (const x of [...Object.values(base), ...Object.values(grads), ...Object.values(qRanges), o, lse, dO]) {
        x.release();
      }
    }
  },
});
