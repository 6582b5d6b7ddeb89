/**
 * `deno task bench vs-torch [--json] [--python P] [--torch-script F]`: Crucible against PyTorch on this machine's
 * CPU, side by side in one run, on the built-in tiny model's shape: training tokens/s with 512- and 4,096-token
 * batches and decode tokens/s (32 sequences, 64-token prompts), each with the ratio Crucible / PyTorch. The PyTorch
 * side is ../shared/bench/torch_tiny.py run with Debian's python3-torch (2 OpenMP threads, OpenBLAS's own core
 * detection); where PyTorch is not installed, that side is skipped with a message saying how to install it.
 */
import { parseArgs } from "node:util";
import { getGpu, type Gpu } from "../../gpu/device.ts";
import { measureDecode, tinyModel, TrainBench } from "./model_run.ts";

/** Usage text of the `vs-torch` subcommand. */
export const VS_TORCH_USAGE = `Usage: deno task bench vs-torch [--json] [--python PATH] [--torch-script FILE]

Crucible on this WebGPU adapter against PyTorch on this CPU, on the tiny model's shape, in one run: training
tokens/s (512- and 4,096-token batches) and decode tokens/s (32 sequences, 64-token prompts), with the ratios.

Options:
  --python PATH        the Python with torch (default /usr/bin/python3, then python3)
  --torch-script FILE  PyTorch's side (default ../shared/bench/torch_tiny.py beside the repository)
  --json               one JSON object

Examples:
  deno task bench vs-torch
  deno task bench vs-torch --python /usr/bin/python3 --json`;

/** One row of the comparison. */
export interface VsRow {
  work: string;
  crucible: number;
  torch: number | null;
  /** crucible / torch; null when PyTorch did not run. */
  ratio: number | null;
}

/** Runs the subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values: v } = parseArgs({
    args,
    options: {
      json: { type: "boolean", default: false },
      python: { type: "string" },
      "torch-script": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(VS_TORCH_USAGE);
  const script = v["torch-script"] ?? new URL("../../../../shared/bench/torch_tiny.py", import.meta.url).pathname;
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
  const rows: VsRow[] = [];
  for (const tokens of [512, 4096]) {
    const ours = await trainRate(gpu, m, tokens);
    const theirs = python.path ? await torchRun(python.path, script, [...shape, "--tokens", String(tokens)]) : null;
    rows.push(row(`train, ${tokens}-token batches`, ours, theirs?.train ?? null));
  }
  const decode = await measureDecode(m, { seqs: 32, promptLen: 64, steps: 8, blocks: 3 });
  const torchDecode = python.path
    ? await torchRun(python.path, script, [...shape, "--decode-batch", "32", "--prompt", "64", "--decode-steps", "64"])
    : null;
  rows.push(row("decode, 32 sequences, 64-token prompts", decode.tokensPerS, torchDecode?.decode ?? null));
  m.model.weights.release();
  if (v.json) return console.log(JSON.stringify({ adapter: gpu.name, model: m.name, params: m.params, rows }));
  say(`Crucible on ${gpu.name} against PyTorch on the CPU; tiny model (${(m.params / 1e6).toFixed(2)} M parameters)`);
  for (const r of rows) {
    const t = r.torch === null ? "skipped" : `${r.torch.toFixed(0)} tok/s`;
    const ratio = r.ratio === null ? "" : `  ratio ${r.ratio.toFixed(2)}x`;
    say(
      `  ${r.work.padEnd(40)} Crucible ${r.crucible.toFixed(0).padStart(6)} tok/s   PyTorch ${t.padStart(12)}${ratio}`,
    );
  }
}

function row(work: string, crucible: number, torch: number | null): VsRow {
  return { work, crucible, torch, ratio: torch === null ? null : crucible / torch };
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
