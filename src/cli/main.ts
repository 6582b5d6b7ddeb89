/**
 * The single entry point of the bundled and compiled program: `crucible <command> [arguments]`, where command is
 * one of the deno tasks (train, eval, sft, generate, grad, serve, serve-model, report, export, play, studio, worker,
 * cluster). The benchmarks (`deno task bench`) are a program of their own, bench/main.ts, outside the product.
 */
import { runMain } from "../command/args.ts";
import { main as cluster } from "./cluster.ts";
import { main as config } from "./config.ts";
import { main as evaluate } from "./eval.ts";
import { main as exportOnnx } from "./export.ts";
import { main as generate } from "./generate.ts";
import { main as grad } from "./grad.ts";
import { main as play } from "./play.ts";
import { main as pretrain } from "./pretrain.ts";
import { main as report } from "./report.ts";
import { main as serve } from "./serve.ts";
import { main as serveModel } from "./serve_model.ts";
import { main as sft } from "./sft.ts";
import { main as studio } from "./studio.ts";
import { main as train } from "./train.ts";
import { runUnderOnnxLock } from "../command/onnx_lock.ts";
import { main as worker } from "./worker.ts";

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  train,
  pretrain,
  eval: evaluate,
  sft,
  generate,
  grad,
  serve,
  "serve-model": serveModel,
  report,
  config,
  export: exportOnnx,
  play,
  studio,
  worker,
  cluster,
};

/** Dispatches to a command. */
export async function main(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h") {
    console.log(
      `Usage: crucible <${Object.keys(COMMANDS).join("|")}> [arguments]   (--help after a command for its own)`,
    );
    return;
  }
  const run = COMMANDS[command];
  if (!run) throw new RangeError(`Unknown command "${command}"; the commands are ${Object.keys(COMMANDS).join(", ")}`);
  await run(rest);
}

if (import.meta.main) {
  const code = await runUnderOnnxLock(new URL(import.meta.url), Deno.args);
  if (code !== undefined) Deno.exit(code);
  await runMain(main);
}
