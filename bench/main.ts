/**
 * `deno task bench <subcommand> [options]`: performance measurements on the current WebGPU adapter. The benchmarks
 * and probes are tools beside the product: their own entry point, which nothing in src/ or mod.ts imports.
 *
 *   kernels   every kernel variant on model-like shapes: time, GFLOP/s or GB/s, first compile
 *   model     the tiny and a Qwen2.5-0.5B-shaped model: training and decode tokens/s, bytes/parameter, hot spots
 *   roofline  the adapter's f32 FMA rate and bandwidth (microkernels), a model's phases as fractions of them
 *   gpu       everything a lent GPU should answer, in at most 10 minutes: one JSON and a Markdown table
 *   train     a training job (`deno task train textcraft`, `textcraft_rl`) end to end: wall time, success before/after RL
 *   recall    how many steps the tiny model needs to learn to copy tokens from its context (copy, induction, seek, lookup)
 *   faults    kills, hostile requests, an outage, and the half-working world (flaky servers, lr 1e6, overflow, a hog)
 *   soak      a TextCraft server driven by many clients for a set time: memory, open files, threads, latency
 *   bfcl-server  steps/s of the BFCL server under concurrent episodes
 *   bfcl-replay  BFCL's own ground truths through the checker and an episode, and against gorilla's Python classes
 *   serve     the OpenAI endpoint's throughput, requests one at a time and all at once
 *   cluster   learner plus 1-3 rollout workers over NATS JetStream against the in-process run (episodes/s, speedup)
 *
 * @example
 * ```sh
 * deno task bench kernels --filter "matmul reg" --json
 * deno task bench model --size tiny
 * ```
 */
import { runMain } from "../src/command/args.ts";
import { runUnderOnnxLock } from "../src/command/onnx_lock.ts";
import { BFCL_REPLAY_USAGE, main as bfclReplay } from "./bfcl_replay.ts";
import { ENV_SERVER_USAGE, main as bfclServer } from "./env_server.ts";
import { CLUSTER_USAGE, main as cluster } from "./cluster.ts";
import { FAULTS_USAGE, main as faults } from "./faults.ts";
import { KERNELS_USAGE, main as kernels } from "./kernels.ts";
import { main as model, MODEL_USAGE } from "./model.ts";
import { main as roofline, ROOFLINE_USAGE } from "./roofline.ts";
import { GPU_USAGE, main as gpuBench } from "./gpu.ts";
import { main as recall, RECALL_USAGE } from "./recall.ts";
import { main as soak, SOAK_USAGE } from "./soak.ts";
import { main as serve, SERVE_USAGE } from "./serve.ts";
import { main as train, TRAIN_USAGE } from "./train.ts";
import { main as vsTorch, VS_TORCH_USAGE } from "./vs_torch.ts";

interface Subcommand {
  summary: string;
  usage: string;
  run(args: string[]): Promise<void>;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  kernels: {
    summary: "time every kernel variant on this adapter (GFLOP/s, GB/s, first compile)",
    usage: KERNELS_USAGE,
    run: kernels,
  },
  model: {
    summary: "tokens/s of training and decoding, peak bytes per parameter and hot spots (tiny, 0.5B-shaped)",
    usage: MODEL_USAGE,
    run: model,
  },
  roofline: {
    summary: "the adapter's own f32 FMA rate and bandwidth, and a model's training step and decode against them",
    usage: ROOFLINE_USAGE,
    run: roofline,
  },
  gpu: {
    summary: "one run of at most 10 minutes for a lent GPU: roofline, models, RL steps, tuned kernels -> JSON + table",
    usage: GPU_USAGE,
    run: gpuBench,
  },
  train: {
    summary: "a training job end to end (the main job, or textcraft_rl: RL alone): wall time, test success, the gap",
    usage: TRAIN_USAGE,
    run: train,
  },
  "vs-torch": {
    summary: "Crucible against PyTorch on this CPU, side by side, with the ratios (training and decode tokens/s)",
    usage: VS_TORCH_USAGE,
    run: vsTorch,
  },
  faults: {
    summary: "kills resumed bit for bit, hostile requests against the server with memory, an outage waited out",
    usage: FAULTS_USAGE,
    run: faults,
  },
  soak: {
    summary: "a TextCraft server driven by many clients for a set time: memory, open files, threads, latency",
    usage: SOAK_USAGE,
    run: soak,
  },
  recall: {
    summary:
      "steps the tiny model needs to learn copying, induction, a seek by content and lookup (what TextCraft's warm start asks)",
    usage: RECALL_USAGE,
    run: recall,
  },
  "bfcl-server": {
    summary: "steps/s of the BFCL server under concurrent episodes playing generated tasks (default 32)",
    usage: ENV_SERVER_USAGE,
    run: bfclServer,
  },
  "bfcl-replay": {
    summary: "BFCL's own ground truths through the checker and an episode; --upstream: against gorilla's classes",
    usage: BFCL_REPLAY_USAGE,
    run: bfclReplay,
  },
  serve: {
    summary: "the OpenAI endpoint: N requests one at a time, then at once (continuous batching), tokens/s",
    usage: SERVE_USAGE,
    run: serve,
  },
  cluster: {
    summary: "learner plus 1, 2, 3 rollout workers over NATS JetStream against in-process: episodes/s, speedup",
    usage: CLUSTER_USAGE,
    run: cluster,
  },
};

/** The usage text: each subcommand with its summary, and examples. */
export function usage(): string {
  const rows = Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`);
  return [
    "Usage: deno task bench <subcommand> [options]   (<subcommand> --help for its options)",
    "",
    "Performance measurements on this machine's WebGPU adapter; speed is reported, never asserted in tests.",
    "",
    "Subcommands:",
    ...rows,
    "",
    "Examples:",
    '  deno task bench kernels --filter "matmul" --json',
    "  deno task bench model --size tiny",
  ].join("\n");
}

/** Runs the named subcommand; an unknown one is a RangeError listing the known ones. */
export async function main(args: string[]): Promise<void> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") return console.log(usage());
  const sub = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (!sub) {
    throw new RangeError(
      `Unknown bench subcommand "${name}"; known: ${Object.keys(SUBCOMMANDS).join(", ")}.\n${usage()}`,
    );
  }
  await sub.run(rest);
}

if (import.meta.main) {
  const code = await runUnderOnnxLock(new URL(import.meta.url), Deno.args, "bench");
  if (code !== undefined) Deno.exit(code);
  await runMain(main);
}
