/**
 * `deno task bench gpu [--out DIR] [--quick] [--budget-s 600] [--json]`: everything a session lent a GPU should
 * answer, in one command of at most 10 minutes: the adapter's ceilings (`bench roofline`), the tiny model and the
 * Qwen2.5-0.5B shape (`bench model`), a few of the main job's RL steps (`bench train`) and every kernel with the
 * matmul products tuned (`bench kernels --tune`). Each part runs as its own `deno task bench` process with the time
 * that is left (a part that fails or overruns costs only itself; what it printed before is kept), and the
 * autotuner's cache file is shared, so later parts run the kernels the earlier ones chose. Writes
 * DIR/bench-gpu.json (every part's JSON rows, the ceilings, each model's phases against them) and DIR/bench-gpu.md
 * (the table). `--quick` runs smoke sizes (lavapipe: a couple of minutes), leaving out the 0.5B shape.
 */
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { RL_ONLY, SMOKE_MODEL_YAML, smokeArgs } from "./smoke_run.ts";
import { gather, type GpuBench, markdown, type PartRun } from "./gpu_report.ts";
import { QUICK_MODEL_FLAGS } from "./roofline.ts";

/** The benchmarks' own entry (bench/main.ts), which runs each part as its own process. */
const BENCH_MAIN = new URL("./main.ts", import.meta.url).href;

/** Usage text of the `gpu` subcommand. */
export const GPU_USAGE = "Usage: deno task bench gpu [--out DIR] [--quick] [--budget-s 600] [--json]\n" +
  "  --out DIR     where bench-gpu.json and bench-gpu.md go (default runs/bench-gpu-<date>; it must not exist)\n" +
  "  --quick       smoke sizes of every part, the 0.5B shape left out (for machines without a GPU; tests)\n" +
  "  --budget-s    seconds for all parts together (default 600); each part gets what is left, up to its own cap\n" +
  "  --json        print bench-gpu.json's object on stdout (the parts' progress goes to stderr either way)\n" +
  "On a GPU: DENO_WEBGPU_BACKEND=vulkan deno task bench gpu. The parts, in order: roofline, model tiny, model 0.5b,\n" +
  "train (3 GRPO steps of the main job from models/crucible-base, evaluation on 4 tasks), kernels --tune.";

/** One part: its `deno task bench` arguments and its own time cap in seconds. */
interface Part {
  name: string;
  args: string[];
  capSeconds: number;
  /** Files the part needs written first (the smoke model's config). */
  files?: Record<string, string>;
  /** Why the part is left out, when it is. */
  skip?: string;
}

/** The parts of a run, in the order they run. */
export function gpuParts(out: string, quick: boolean): Part[] {
  const trainArgs = quick
    ? smokeArgs(`${out}/smoke-tiny.yaml`, [...RL_ONLY, "trainer.total_steps=1"])
    : ["sft.enabled=false", "trainer.total_steps=3", "trainer.eval_limit=4", "trainer.save_freq=0"];
  return [
    { name: "roofline", args: ["roofline", "--json", "--size", "none", ...(quick ? ["--quick"] : [])], capSeconds: 60 },
    {
      name: "model tiny",
      args: ["model", "--size", "tiny", "--json", ...(quick ? QUICK_MODEL_FLAGS : ["--no-onnx"])],
      capSeconds: 60,
    },
    {
      name: "model 0.5b",
      args: ["model", "--size", "0.5b", "--json", "--no-onnx"],
      capSeconds: 240,
      ...(quick ? { skip: "left out by --quick" } : {}),
    },
    {
      name: "train",
      args: ["train", "--json", "--no-extra", "--run-dir", `${out}/train-run`, ...trainArgs],
      capSeconds: 150,
      ...(quick ? { files: { [`${out}/smoke-tiny.yaml`]: SMOKE_MODEL_YAML } } : {}),
    },
    {
      name: "kernels",
      args: quick
        ? ["kernels", "--json", "--tune", "--filter", "matmul reg8x8 4x4864x896", "--budget-ms", "20"]
        : ["kernels", "--json", "--tune", "--budget-ms", "100"],
      capSeconds: 300,
    },
  ];
}

/** The JSON objects among a process's output lines. */
function jsonRows(text: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      rows.push(JSON.parse(line));
    } catch {
      // A line cut off when the part was stopped: the rows before it stand.
    }
  }
  return rows;
}

/** Runs one part as `deno run -A bench/main.ts <part> ...` (this entry), stopped after `seconds`. */
async function runPart(part: Part, seconds: number): Promise<PartRun> {
  const t0 = performance.now();
  if (part.skip || seconds < 5) {
    const note = part.skip ?? "no time left in the budget";
    return { name: part.name, args: part.args, seconds: 0, code: null, timedOut: false, rows: [], note };
  }
  for (const [path, text] of Object.entries(part.files ?? {})) await Deno.writeTextFile(path, text);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", BENCH_MAIN, ...part.args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGTERM");
  }, seconds * 1000);
  const { code, stdout } = await child.output();
  clearTimeout(timer);
  return {
    name: part.name,
    args: part.args,
    seconds: (performance.now() - t0) / 1000,
    code: timedOut ? null : code,
    timedOut,
    rows: jsonRows(new TextDecoder().decode(stdout)),
  };
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

/** Runs the `gpu` subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench gpu", {
    args,
    options: {
      out: { type: "string" },
      quick: { type: "boolean", default: false },
      "budget-s": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return console.log(GPU_USAGE);
  const budget = numberFlag("--budget-s", values["budget-s"], 600, { lo: 10, hi: 86_400 });
  const out = values.out ?? `runs/bench-gpu-${stamp()}`;
  if (dryRun(`would run bench gpu into ${out}`)) return;
  try {
    await Deno.stat(out);
    throw new RangeError(`Output folder ${out} exists; bench gpu needs a fresh one (--out DIR)`);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await Deno.mkdir(out, { recursive: true });
  const started = new Date().toISOString();
  const t0 = performance.now();
  const parts: PartRun[] = [];
  for (const part of gpuParts(out, values.quick)) {
    const left = budget - (performance.now() - t0) / 1000;
    console.error(`bench gpu: ${part.name} (up to ${Math.round(Math.min(part.capSeconds, left))} s)`);
    parts.push(await runPart(part, Math.min(part.capSeconds, left)));
  }
  const report: GpuBench = {
    command: `deno task bench gpu ${args.join(" ")}`.trim(),
    started,
    finished: new Date().toISOString(),
    quick: values.quick,
    budgetSeconds: budget,
    deno: Deno.version.deno,
    parts,
    ...gather(parts),
  };
  await Deno.writeTextFile(`${out}/bench-gpu.json`, JSON.stringify(report, null, 1) + "\n");
  const md = markdown(report);
  await Deno.writeTextFile(`${out}/bench-gpu.md`, md);
  if (values.json) console.log(JSON.stringify(report));
  else console.log(`${md}\nWritten: ${out}/bench-gpu.json and ${out}/bench-gpu.md`);
}
