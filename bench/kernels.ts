/**
 * `deno task bench kernels [--json] [--filter STR] [--exclude STR ...] [--budget-ms 1000] [--cold] [--list] [--tune]
 * [--clear-tuning]`: times every registered kernel case on the current adapter and prints, per case, the shape, the
 * best time, GFLOP/s or GB/s and the first compile; then, for kernels with several variants, the fastest variant per
 * shape next to the one the op picks; then the autotuner's table for this adapter (src/gpu/tuner.ts). `--tune`
 * first times the matmul candidates of every benchmarked product and keeps the fastest in that table.
 * `--exclude "matmul tile"` skips the matmul shapes that take seconds per run on a CPU rasteriser.
 */
import { getGpu, type Gpu } from "../src/gpu/device.ts";
import { configureTuner, KERNEL_CACHE_ENV, TUNE_ENV, type TuneChoice, tunerOf } from "../src/gpu/tuner.ts";
import { tuneMatmul } from "../src/ops/matmul.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { MATMUL_PRODUCTS, productName } from "./matmul.ts";
import { benchCases, caseLabel } from "./cases.ts";
import { type BenchResult, measureCase } from "./measure.ts";

/** Usage text of the `kernels` subcommand. */
export const KERNELS_USAGE =
  "Usage: deno task bench kernels [--json] [--filter STR] [--exclude STR ...] [--budget-ms 1000] [--cold] [--list]\n" +
  "                               [--tune] [--clear-tuning]\n" +
  "  --json         one JSON object per case and line: kernel, variant, shape, ms, gflops and gbps (null where\n" +
  "                 not counted), compileMs, ...\n" +
  '  --filter STR   only cases whose "kernel variant shape" contains STR (case-insensitive)\n' +
  '  --exclude STR  leave out cases whose label contains STR (repeatable), e.g. --exclude "matmul tile"\n' +
  "  --budget-ms   steady-state time per case after the first two runs (at least 2 samples, 1 past twice it)\n" +
  "  --cold        disable Mesa's shader cache, so that compileMs is a true first compile\n" +
  "  --list        print the cases without running them\n" +
  "  --tune        first time every matmul candidate on each selected matmul product (also on a CPU rasteriser)\n" +
  "                and keep the fastest in the autotuner's cache; the table is printed at the end either way\n" +
  "  --clear-tuning forget this adapter's tuned choices (the cache file's entries for it) and exit\n" +
  "The autotuner: runs time a kernel shape's candidates on first use on a GPU and cache the choice by adapter,\n" +
  `driver and shape in $XDG_CACHE_HOME/crucible/kernels.json (~/.cache/...; ${KERNEL_CACHE_ENV}=path or off).\n` +
  `${TUNE_ENV}=off runs the seeded defaults (lavapipe's measured table), on tunes on any adapter, auto (default)\n` +
  "on hardware only. Clear the cache with --clear-tuning or by deleting the file.";

/** Runs the `kernels` subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench kernels", {
    args,
    options: {
      json: { type: "boolean", default: false },
      filter: { type: "string" },
      exclude: { type: "string", multiple: true },
      "budget-ms": { type: "string" },
      cold: { type: "boolean", default: false },
      list: { type: "boolean", default: false },
      tune: { type: "boolean", default: false },
      "clear-tuning": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return console.log(KERNELS_USAGE);
  const budgetMs = numberFlag("--budget-ms", values["budget-ms"], 1000, { lo: 0, hi: 600_000 });
  // Mesa reads this when the driver loads, so it must be set before the first adapter request.
  if (values.cold) Deno.env.set("MESA_SHADER_CACHE_DISABLE", "true");
  if (dryRun(`would time the kernels`)) return;
  const gpu = await getGpu();
  if (values["clear-tuning"]) {
    const t = tunerOf(gpu);
    const n = Object.keys(t.choices).length;
    t.clear();
    return console.log(`Forgot ${n} tuned choice(s) for ${gpu.name} in ${t.cachePath ?? "memory (no cache file)"}`);
  }
  const needle = values.filter?.toLowerCase();
  const skip = (values.exclude ?? []).map((x) => x.toLowerCase());
  const select = () =>
    benchCases(gpu).filter((c) => {
      const label = caseLabel(c).toLowerCase();
      return (!needle || label.includes(needle)) && !skip.some((x) => label.includes(x));
    });
  let cases = select();
  if (cases.length === 0) throw new RangeError(`No benchmark case matches --filter "${values.filter}"; try --list`);
  if (values.list) return cases.forEach((c) => console.log(caseLabel(c)));
  if (values.tune) {
    // The products among the selected cases; their picks are marked again after tuning.
    const shapes = new Set(cases.filter((c) => c.kernel === "matmul").map((c) => c.shape));
    await tuneProducts(gpu, MATMUL_PRODUCTS.filter((p) => shapes.has(productName(p))), values.json);
    cases = select();
  }
  // JSON rows of the table first: a caller that stops this run early (bench gpu) keeps them.
  if (values.json) tunedTable(gpu, true).forEach((line) => console.log(line));
  if (!values.json) console.log(adapterLine(gpu, cases.length));
  const results: BenchResult[] = [];
  for (const c of cases) {
    let r: BenchResult;
    try {
      r = await measureCase(gpu, c, { budgetMs });
    } catch (e) {
      // One failing case (a limit, a shader that does not build here) must not hide the others.
      const error = e instanceof Error ? e.message.split("\n")[0] : String(e);
      console.log(
        values.json
          ? JSON.stringify({ kernel: c.kernel, variant: c.variant, shape: c.shape, error })
          : `! ${caseLabel(c)}: ${error}`,
      );
      continue;
    }
    results.push(r);
    console.log(values.json ? JSON.stringify({ gflops: null, gbps: null, ...r, adapter: gpu.name }) : resultLine(r));
  }
  if (!values.json) summary(results).forEach((line) => console.log(line));
  if (!values.json) tunedTable(gpu, false).forEach((line) => console.log(line));
}

/** Times the matmul candidates of the products (any adapter: the user asked) and keeps the fastest. */
async function tuneProducts(gpu: Gpu, products: typeof MATMUL_PRODUCTS, json: boolean): Promise<void> {
  const t = configureTuner(gpu, { mode: "on" });
  for (const p of products) {
    const choice = await tuneMatmul(gpu, { ...p, transA: p.trans[0] === "T", transB: p.trans[1] === "T" });
    if (!json) console.log(`tuned matmul ${productName(p).padEnd(30)} ${choiceText(choice)}`);
  }
  if (!json) console.log(`(kept in ${t.cachePath ?? "memory only"})`);
}

/** "wg64x64_t4x4_k16 0.41 ms (seed tile64x64_t8x8_k16 0.52 ms; 11 timed)". */
function choiceText(c: TuneChoice): string {
  const ms = (v: string) => {
    const x = c.ms[v];
    return typeof x === "number" && Number.isFinite(x) ? `${x.toFixed(3)} ms` : "failed";
  };
  const seed = c.variant === c.seed ? "the seed" : `seed ${c.seed} ${ms(c.seed)}`;
  return `${c.variant} ${ms(c.variant)} (${seed}; ${Object.keys(c.ms).length} timed)`;
}

/** The autotuner's table for this adapter: one line (or JSON object) per tuned key. */
function tunedTable(gpu: Gpu, json: boolean): string[] {
  const t = tunerOf(gpu);
  const entries = Object.entries(t.choices).sort(([a], [b]) => a.localeCompare(b));
  if (json) return entries.map(([key, c]) => JSON.stringify({ tuned: key, ...c, adapter: gpu.name }));
  const where = t.mode === "off" ? `${TUNE_ENV}=off: seeded defaults only` : t.cachePath ?? "memory only";
  if (entries.length === 0) return ["", `autotune table (${where}): empty; the seeded defaults run (--tune fills it)`];
  return [
    "",
    `autotune table for this adapter (${where}; M and K bucketed to powers of two):`,
    ...entries.map(([key, c]) => `  ${key.padEnd(58)} ${choiceText(c)}`),
  ];
}

function adapterLine(gpu: Gpu, n: number): string {
  const f = gpu.features;
  const sub = gpu.info.subgroupMinSize ? `, subgroup ${gpu.info.subgroupMinSize}-${gpu.info.subgroupMaxSize}` : "";
  return `${gpu.name}${gpu.software ? " (software)" : ""}: f16 ${f.f16}, subgroups ${f.subgroups}${sub}, ` +
    `timestamps ${f.timestamps}; ${n} cases (* = the variant the op picks)`;
}

const fixed = (x: number | undefined, digits: number, width: number) =>
  (x === undefined ? "-" : x.toFixed(digits)).padStart(width);

function resultLine(r: BenchResult): string {
  const cpu = r.cpuMs === undefined ? "" : `  cpu-ms ${fixed(r.cpuMs, 2, 9)}`;
  return `${r.picked ? "*" : " "} ${r.kernel.padEnd(24)} ${r.variant.padEnd(22)} ${r.shape.padEnd(34)} ` +
    `ms ${fixed(r.ms, 2, 9)}  GFLOP/s ${fixed(r.gflops, 2, 7)}  GB/s ${fixed(r.gbps, 2, 7)}  ` +
    `compile ${fixed(r.compileMs / 1000, 2, 6)} s${cpu}`;
}

/**
 * Per kernel and shape where the op picks among variants: the fastest and the picked one, with the ratio of their
 * times. Kernels without a choice (dtypes, directions, sampler settings) are left out.
 */
function summary(results: BenchResult[]): string[] {
  const groups = new Map<string, BenchResult[]>();
  for (const r of results) {
    const key = `${r.kernel} ${r.shape}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const lines = ["", "fastest per shape (by best time; picked / fastest time ratio):"];
  for (const [key, rs] of groups) {
    if (rs.length < 2 || !rs.some((r) => r.picked)) continue;
    const best = rs.reduce((a, b) => b.ms < a.ms ? b : a);
    const picked = rs.find((r) => r.picked);
    const rate = (r: BenchResult) =>
      r.gflops !== undefined ? `${r.gflops.toFixed(2)} GFLOP/s` : `${r.ms.toFixed(2)} ms`;
    const pick = picked ? `picked ${picked.variant} x${(picked.ms / best.ms).toFixed(2)}` : "picked -";
    lines.push(`  ${key.padEnd(60)} fastest ${best.variant.padEnd(22)} ${rate(best).padStart(16)}  ${pick}`);
  }
  return lines;
}
