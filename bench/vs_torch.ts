/**
 * `deno task bench vs-torch [--json] [--rounds N] [--python P] [--torch-script F]`: Crucible against PyTorch on this
 * machine's CPU, side by side in one run, on the built-in tiny model's shape: training tokens/s with 512- and
 * 4,096-token batches and decode tokens/s (32 sequences, 64-token prompts), each with the ratio Crucible / PyTorch.
 * The PyTorch side is ../shared/bench/torch_tiny.py run with Debian's python3-torch (2 OpenMP threads, OpenBLAS's own
 * core detection); where PyTorch is not installed, that side is skipped with a message saying how to install it.
 *
 * Both sides move by up to half between runs minutes apart on these shared 2-core machines, so one pair of
 * measurements says little. Each round measures every work item on both sides back to back (Crucible, then PyTorch,
 * seconds apart), and the ratio reported is the median of the rounds' ratios, with their range beside it.
 */
import { getGpu, type Gpu } from "../src/gpu/device.ts";
import { dryRun, numberFlag, parseFlags } from "../src/command/args.ts";
import { measureDecode, tinyModel, TrainBench } from "./model_run.ts";

/** Usage text of the `vs-torch` subcommand. */
export const VS_TORCH_USAGE =
  `Usage: deno task bench vs-torch [--json] [--rounds N] [--python PATH] [--torch-script FILE]

Crucible on this WebGPU adapter against PyTorch on this CPU, on the tiny model's shape, in one run: training
tokens/s (512- and 4,096-token batches) and decode tokens/s (32 sequences, 64-token prompts), with the ratios.
Each round measures every item on both sides back to back; the ratio printed is the median of the rounds'.

Options:
  --rounds N           rounds of side-by-side measurements (default 3; about 2.5 minutes each)
  --python PATH        the Python with torch (default /usr/bin/python3, then python3)
  --torch-script FILE  PyTorch's side (default ../shared/bench/torch_tiny.py beside the repository)
  --json               one JSON object

Examples:
  deno task bench vs-torch
  deno task bench vs-torch --rounds 5
  deno task bench vs-torch --python /usr/bin/python3 --json`;

/** One row of the comparison: medians over the rounds, and every round's numbers. */
export interface VsRow {
  work: string;
  /** Median tokens/s over the rounds. */
  crucible: number;
  torch: number | null;
  /** Median of the rounds' crucible / torch; null when PyTorch did not run. */
  ratio: number | null;
  /** Each round's tokens/s and ratio, in the order measured. */
  rounds: { crucible: number; torch: number | null; ratio: number | null }[];
}

/** One round's measurement of one work item. */
export interface VsSample {
  work: string;
  crucible: number;
  torch: number | null;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError("The median of no values is undefined");
  const s = [...xs].sort((a, b) => a - b), h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Rounds of samples gathered into one row per work item (in first-seen order), medians and per-round ratios. */
export function summarize(samples: readonly VsSample[]): VsRow[] {
  const by = new Map<string, VsSample[]>();
  for (const x of samples) by.set(x.work, [...by.get(x.work) ?? [], x]);
  return [...by].map(([work, xs]) => {
    const rounds = xs.map((x) => ({ ...x, ratio: x.torch === null ? null : x.crucible / x.torch }));
    const ratios = rounds.flatMap((r) => r.ratio === null ? [] : [r.ratio]);
    const torches = rounds.flatMap((r) => r.torch === null ? [] : [r.torch]);
    return {
      work,
      crucible: median(rounds.map((r) => r.crucible)),
      torch: torches.length ? median(torches) : null,
      ratio: ratios.length ? median(ratios) : null,
      rounds: rounds.map(({ crucible, torch, ratio }) => ({ crucible, torch, ratio })),
    };
  });
}

/** Runs the subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseFlags("deno task bench vs-torch", {
    args,
    options: {
      json: { type: "boolean", default: false },
      python: { type: "string" },
      rounds: { type: "string" },
      "torch-script": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(VS_TORCH_USAGE);
  const roundCount = numberFlag("--rounds", v.rounds, 3, { lo: 1, hi: 100, integer: true });
  const script = v["torch-script"] ?? new URL("../../shared/bench/torch_tiny.py", import.meta.url).pathname;
  if (dryRun(`would compare against PyTorch over ${roundCount} rounds`)) return;
  const gpu = await getGpu();
  const m = await tinyModel(gpu);
  const c = m.config;
  const shape = [
    ["--hidden", c.hiddenSize],
    ["--inter", c.intermediateSize],
    ["--layers", c.numLayers],
    ["--heads", c.numHeads],
    ["--kv", c.numKvHeads],
    ["--vocab", c.vocabSize],
  ].flatMap(([f, x]) => [String(f), String(x)]);
  const python = await findTorch(v.python);
  const say = (s: string) => v.json ? console.error(s) : console.log(s);
  if (!python.path) say(`PyTorch side skipped: ${python.why}`);
  const samples: VsSample[] = [];
  const progress = (x: VsSample, round: number) => {
    const ratio = x.torch === null ? "" : `, ratio ${(x.crucible / x.torch).toFixed(2)}x`;
    const t = x.torch === null ? "skipped" : `${x.torch.toFixed(0)} tok/s`;
    console.error(
      `round ${round}/${roundCount}: ${x.work}: Crucible ${x.crucible.toFixed(0)} tok/s, PyTorch ${t}${ratio}`,
    );
    samples.push(x);
  };
  try {
    for (let round = 1; round <= roundCount; round++) {
      for (const tokens of [512, 4096]) {
        const ours = await trainRate(gpu, m, tokens);
        const theirs = python.path ? await torchRun(python.path, script, [...shape, "--tokens", String(tokens)]) : null;
        progress({ work: `train, ${tokens}-token batches`, crucible: ours, torch: theirs?.train ?? null }, round);
      }
      const decode = await measureDecode(m, { seqs: 32, promptLen: 64, steps: 8, blocks: 3 });
      const torchDecode = python.path
        ? await torchRun(python.path, script, [
          ...shape,
          "--decode-batch",
          "32",
          "--prompt",
          "64",
          "--decode-steps",
          "64",
        ])
        : null;
      const work = "decode, 32 sequences, 64-token prompts";
      progress({ work, crucible: decode.tokensPerS, torch: torchDecode?.decode ?? null }, round);
    }
  } finally {
    m.model.weights.release();
  }
  const rows = summarize(samples);
  if (v.json) {
    return console.log(
      JSON.stringify({ adapter: gpu.name, model: m.name, params: m.params, rounds: roundCount, rows }),
    );
  }
  say(`Crucible on ${gpu.name} against PyTorch on the CPU; tiny model (${(m.params / 1e6).toFixed(2)} M parameters)`);
  say(`medians of ${roundCount} round(s), each measuring both sides back to back; ratio range over the rounds`);
  for (const r of rows) {
    const t = r.torch === null ? "skipped" : `${r.torch.toFixed(0)} tok/s`;
    const ratios = r.rounds.flatMap((x) => x.ratio === null ? [] : [x.ratio]);
    const range = ratios.length > 1 ? ` (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})` : "";
    const ratio = r.ratio === null ? "" : `  ratio ${r.ratio.toFixed(2)}x${range}`;
    say(
      `  ${r.work.padEnd(40)} Crucible ${r.crucible.toFixed(0).padStart(6)} tok/s   PyTorch ${t.padStart(12)}${ratio}`,
    );
  }
}

async function trainRate(gpu: Gpu, m: Awaited<ReturnType<typeof tinyModel>>, tokens: number): Promise<number> {
  const bench = new TrainBench(gpu, m, { tokens, seqLen: Math.min(512, tokens) });
  try {
    return (await bench.measure(3)).tokensPerS;
  } finally {
    bench.release();
  }
}

/** The Python that imports torch, or why there is none. */
async function findTorch(given?: string): Promise<{ path?: string; why?: string }> {
  for (const p of given ? [given] : ["/usr/bin/python3", "python3"]) {
    try {
      const r = await new Deno.Command(p, { args: ["-c", "import torch"], stdout: "null", stderr: "null" }).output();
      if (r.code === 0) return { path: p };
    } catch {
      // not found: try the next
    }
  }
  return {
    why: "no Python with torch; on Debian install it with `apt-get install python3-torch libopenblas0-pthread`",
  };
}

/** Runs the PyTorch script with 2 OpenMP threads and OpenBLAS's own core detection; its JSON lines by kind. */
async function torchRun(python: string, script: string, args: string[]): Promise<{ train?: number; decode?: number }> {
  const env: Record<string, string> = { ...Deno.env.toObject(), OMP_NUM_THREADS: "2" };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  const r = await new Deno.Command(python, {
    args: [script, ...args],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (r.code !== 0) {
    throw new Error(`PyTorch's side (${python} ${script}) failed: ${new TextDecoder().decode(r.stderr).slice(-400)}`);
  }
  const out: { train?: number; decode?: number } = {};
  for (const line of new TextDecoder().decode(r.stdout).trim().split("\n")) {
    const j = JSON.parse(line) as { what: string; tokens_per_s: number };
    if (j.what === "train") out.train = j.tokens_per_s;
    if (j.what === "decode") out.decode = j.tokens_per_s;
  }
  return out;
}
