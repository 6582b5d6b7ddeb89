/**
 * `deno task bench <subcommand> [options]`: performance measurements on the current WebGPU adapter.
 *
 *   kernels   every kernel variant on model-like shapes: time, GFLOP/s or GB/s, first compile
 *
 * `model` (a forward/backward step) and `train` (steps per second) are to come: add them to SUBCOMMANDS.
 *
 * @example
 * ```sh
 * deno task bench kernels --filter "matmul reg" --json
 * ```
 */
import { KERNELS_USAGE, main as kernels } from "./bench/kernels.ts";

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
};

/** The usage text: each subcommand with its summary. */
export function usage(): string {
  const rows = Object.entries(SUBCOMMANDS).map(([name, s]) => `  ${name.padEnd(10)} ${s.summary}`);
  return ["Usage: deno task bench <subcommand> [options]   (<subcommand> --help for its options)", ...rows].join("\n");
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

