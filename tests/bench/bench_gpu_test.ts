// `deno task bench gpu`, `bench roofline` and `bench kernels --tune` as a user runs them (subprocesses, smoke sizes
// on lavapipe), and the roofline's arithmetic and the report's table on made-up measurements (no GPU).
import assert from "node:assert/strict";
import { gather, type GpuBench, markdown, type PartRun } from "../../bench/gpu_report.ts";
import type { ModelReport } from "../../bench/model.ts";
import { causalPairs, type Ceilings, matmulParams, rooflinePhases } from "../../bench/roofline_phases.ts";
import { MATMUL_VARIANTS } from "../../src/ops/matmul_variants.ts";
import { noGpu } from "../no_gpu.ts";
import { BENCH_TASK_FLAGS, runDeno } from "../subprocess.ts";

const VARIANT_NAMES = MATMUL_VARIANTS.map((v) => v.name);

const bench = (args: string[], env: Record<string, string> = {}) =>
  runDeno([...BENCH_TASK_FLAGS, ...args], { env: { NO_COLOR: "1", ...env } });

const positive = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x > 0;

const CEILINGS: Ceilings = {
  fmaGflops: 1000,
  bandwidthGBs: 100,
  fmaMs: 1,
  copyMs: 1,
  fmaFlops: 1e9,
  copyBytes: 1e8,
};

/** A made-up report: 2 layers, C 8, I 16, H 2, KV 1, D 4, V 10; one 4-token sequence; a profile of 10 ms. */
function report(over: Partial<ModelReport> = {}): ModelReport {
  return {
    model: "toy",
    adapter: "Toy GPU",
    layers: 2,
    hidden: 8,
    vocab: 10,
    intermediate: 16,
    heads: 2,
    kvHeads: 1,
    headDim: 4,
    vocabNote: "",
    params: 1000,
    train: { tokens: 4, seqs: 1, seqLen: 4, stepMs: [20], bestMs: 20, tokensPerS: 200, loss: 2 },
    decode: {
      seqs: 2,
      promptLen: 1,
      steps: 3,
      blocks: 1,
      blockTokens: 8,
      firstMs: 1,
      blockMs: [8],
      bestMs: 8,
      tokensPerS: 1000,
    },
    memory: { peakBytes: 1, bytesPerParam: 1, heldBytesPerParam: 1, stateBytesPerParam: 16 },
    profile: {
      gpuMs: 10,
      dispatches: 5,
      timed: 5,
      hotspots: [
        { kernel: "matmul reg8x8", ms: 5, share: 0.5, calls: 3 },
        { kernel: "attention forward reg1x2", ms: 2, share: 0.2, calls: 1 },
        { kernel: "adamw", ms: 1, share: 0.1, calls: 1 },
        { kernel: "rmsnorm_forward", ms: 2, share: 0.2, calls: 1 },
      ],
    },
    ...over,
  } as ModelReport;
}

Deno.test("roofline phases: counted work over measured time, as fractions of the ceilings; no rate where none is counted", () => {
  const m = report();
  // Per layer 2·8·2·4 (q, o) + 2·8·1·4 (k, v) + 3·8·16, twice, plus the head 10·8.
  assert.equal(matmulParams(m), 2 * (128 + 64 + 384) + 80);
  assert.equal(causalPairs(4, 4), 10);
  assert.equal(causalPairs(5, 2), 3 + 3 + 1);
  const r = rooflinePhases(CEILINGS, m);
  const by = Object.fromEntries(r.phases.map((p) => [p.phase, p]));
  const mm = 6 * 4 * 1232, attn = 14 * 2 * 4 * 2 * 10;
  assert.equal(by["train step, wall"].flops, mm + attn);
  assert.ok(Math.abs(by["train step, wall"].ofFma! - (mm + attn) / 20 / 1e6 / 1000) < 1e-15);
  assert.equal(by["train matmuls"].flops, mm);
  assert.equal(by["train matmuls"].ms, 5);
  assert.equal(by["train attention"].flops, attn);
  assert.equal(by["train optimizer"].bytes, 32_000);
  assert.ok(Math.abs(by["train optimizer"].ofBandwidth! - 32_000 / 1 / 1e6 / 100) < 1e-15);
  assert.equal(by["train other kernels"].ms, 2);
  assert.ok(!("gflops" in by["train other kernels"]) && !("ofFma" in by["train other kernels"]));
  // Decode: a 4-token block of 8 ms is 2 ms a step; the weights are read once a step.
  assert.equal(by["decode step, weights"].ms, 2);
  assert.equal(by["decode step, weights"].bytes, 4 * 1232);
  assert.equal(by["decode step, matmuls"].flops, 2 * 1232 * 2);
  // With LoRA the training step's work is another count: left out, never guessed.
  const lora = rooflinePhases(CEILINGS, report({ lora: { rank: 2, params: 10 } }));
  assert.deepEqual(lora.phases.map((p) => p.phase), ["decode step, weights", "decode step, matmuls"]);
});

Deno.test("bench gpu's table names every part and what it measured, and a part that did not run says why", () => {
  const parts: PartRun[] = [
    {
      name: "roofline",
      args: ["roofline", "--json"],
      seconds: 1,
      code: 0,
      timedOut: false,
      rows: [{ adapter: "Toy GPU", ceilings: CEILINGS }],
    },
    { name: "model toy", args: ["model"], seconds: 2, code: 0, timedOut: false, rows: [report() as never] },
    {
      name: "model 0.5b",
      args: ["model", "--size", "0.5b"],
      seconds: 0,
      code: null,
      timedOut: false,
      rows: [],
      note: "left out by --quick",
    },
    { name: "train", args: ["train", "a.b=[2]"], seconds: 3, code: null, timedOut: true, rows: [] },
    {
      name: "kernels",
      args: ["kernels", "--filter", "matmul reg8x8"],
      seconds: 4,
      code: 0,
      timedOut: false,
      rows: [{
        tuned: "matmul@abc NT f32xf32 M4 N8 K8",
        variant: "wg64x64_t4x4_k16",
        seed: "gemv8_w64x4",
        ms: { "wg64x64_t4x4_k16": 0.5, gemv8_w64x4: 1 },
      }],
    },
  ];
  const g = gather(parts);
  assert.equal(g.adapter, "Toy GPU");
  assert.deepEqual(g.ceilings, CEILINGS);
  assert.equal(g.roofline.length, 1);
  const b: GpuBench = {
    command: "deno task bench gpu",
    started: "s",
    finished: "f",
    quick: false,
    budgetSeconds: 600,
    deno: "2.9.6",
    parts,
    ...g,
  };
  const md = markdown(b);
  assert.match(md, /\| f32 FMA rate \(microkernel\) \| 1,000 GFLOP\/s \| roofline \|/);
  assert.match(md, /\| memory bandwidth \(copy microkernel\) \| 100 GB\/s \| roofline \|/);
  assert.match(
    md,
    /\| toy training, 4-token batch \| 200 tokens\/s \(20 ms a step\), [\d.]+% of the ceiling \| model toy \|/,
  );
  assert.match(
    md,
    /\| tuned matmul NT f32xf32 M4 N8 K8 \| wg64x64_t4x4_k16 0.500 ms \(seed gemv8_w64x4 1.000 ms\) \| kernels \|/,
  );
  assert.match(md, /\| model 0.5b \| 0.0 \| left out by --quick \|/);
  assert.match(md, /\| train \| 3.0 \| stopped at its time limit \| `deno task bench train 'a.b=\[2\]'` \|/);
  assert.match(md, /--filter 'matmul reg8x8'/);
  assert.match(md, /## Phases against the ceilings/);
});

Deno.test({
  name: "bench gpu --quick runs every part end to end and writes its JSON and Markdown",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const out = `${dir}/out`;
      const r = await bench(["gpu", "--quick", "--out", out, "--json"], {
        CRUCIBLE_KERNEL_CACHE: `${dir}/kernels.json`,
      });
      assert.equal(r.code, 0, r.err + r.out);
      const b = JSON.parse(await Deno.readTextFile(`${out}/bench-gpu.json`)) as GpuBench;
      assert.deepEqual(b.parts.map((p) => p.name), ["roofline", "model tiny", "model 0.5b", "train", "kernels"]);
      for (const p of b.parts.filter((x) => x.name !== "model 0.5b")) {
        assert.equal(p.code, 0, `${p.name}: ${JSON.stringify(p)}`);
        assert.ok(p.rows.length > 0, p.name);
      }
      assert.equal(b.parts[2].note, "left out by --quick");
      assert.ok(positive(b.ceilings?.fmaGflops) && positive(b.ceilings?.bandwidthGBs), JSON.stringify(b.ceilings));
      assert.equal(b.roofline[0].model, "tiny");
      assert.ok(b.roofline[0].phases.some((p) => p.phase === "train matmuls" && positive(p.ofFma)));
      const train = b.parts[3].rows[0] as { phases: Record<string, number> };
      assert.ok(positive(train.phases.decode), JSON.stringify(train.phases));
      // kernels --tune tuned its one product into the cache file given, and printed the table's row. Which variant
      // wins is a timing (it moves with the machine's load), so only that it is one of the candidates is asserted.
      const tuned = b.parts[4].rows.find((x) => "tuned" in x) as { variant: string } | undefined;
      assert.ok(VARIANT_NAMES.includes(tuned?.variant ?? ""), JSON.stringify(tuned));
      const cache = JSON.parse(await Deno.readTextFile(`${dir}/kernels.json`));
      assert.equal(Object.keys(cache.adapters).length, 1);
      const md = await Deno.readTextFile(`${out}/bench-gpu.md`);
      assert.match(md, /\| f32 FMA rate \(microkernel\) \| [\d,.]+ GFLOP\/s \| roofline \|/);
      assert.match(md, /\| main job's RL steps \|/);
      const again = await bench(["gpu", "--quick", "--out", out]);
      assert.notEqual(again.code, 0);
      assert.match(again.err, /Output folder .* exists; bench gpu needs a fresh one/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "bench kernels --clear-tuning forgets this adapter's choices; --help says how the cache is cleared",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const env = { CRUCIBLE_KERNEL_CACHE: `${dir}/k.json`, CRUCIBLE_TUNE: "auto" };
      const tune = await bench([
        "kernels",
        "--tune",
        "--filter",
        "matmul reg8x8 4x4864x896",
        "--budget-ms",
        "10",
      ], env);
      assert.equal(tune.code, 0, tune.err + tune.out);
      // The winner is a timing; the row names the product and one of the candidates.
      const row = /autotune table for this adapter .*\n\s+matmul@\w+ NT f32xf32 M4 N4864 K1024\s+(\S+) /.exec(tune.out);
      assert.ok(row && VARIANT_NAMES.includes(row[1]), tune.out);
      const clear = await bench(["kernels", "--clear-tuning"], env);
      assert.equal(clear.code, 0, clear.err);
      assert.match(clear.out, /Forgot 1 tuned choice\(s\)/);
      const file = JSON.parse(await Deno.readTextFile(`${dir}/k.json`));
      assert.deepEqual(file.adapters, {});
      const help = await bench(["kernels", "--help"]);
      assert.match(help.out, /--clear-tuning/);
      assert.match(help.out, /CRUCIBLE_TUNE=off/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
