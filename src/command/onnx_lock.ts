/**
 * The run-time locks. Every task runs under deno.lock, with lazy npm caching: a run installs what its module graph
 * reaches (deno.json's imports), and the packages loaded on first use when a command imports them (docs/first-run.md).
 * The ONNX packages are pinned apart, because Deno still reads the registry entry of every package of the lock it runs
 * under, whether the program imports it or not: onnxruntime-web (about 140 MB) and
 * onnx-proto with protobufjs in src/onnx/deno.lock, onnx-proto alone in src/onnx/export.lock. A command line that
 * needs them (`play`, `eval --engine onnx`, `bench model` without `--no-onnx`; `export`) therefore runs again as a
 * child process under its lock; `--help` and flag errors are answered before, so a first look at any command stays
 * light.
 *
 * The child is marked by an environment variable so it never re-runs itself. A bundle or compiled binary carries
 * its packages already and never re-runs (the entry is not src/cli/main.ts there).
 */
import { EXPORT_LOCK, ONNX_LOCK } from "../onnx/runtime.ts";

/** Set in the child that runs under the ONNX lock. */
export const ONNX_LOCK_ENV = "CRUCIBLE_ONNX_LOCK";

const HELP = new Set(["--help", "-h"]);

/** The value of `--name V` or `--name=V` in `args`, the last one winning, as parseArgs reads it. */
function flagValue(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (const [i, a] of args.entries()) {
    if (a === name) value = args[i + 1];
    else if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1);
  }
  return value;
}

/**
 * The lock `command args` needs beyond deno.lock (relative to the repository root), or undefined: none for every
 * `--help` and for the commands that load no ONNX package.
 *
 * @example
 * ```ts
 * onnxLockFor("eval", ["--model", "m", "--engine", "onnx"]); // "src/onnx/deno.lock"
 * onnxLockFor("play", ["--help"]); // undefined
 * ```
 */
export function onnxLockFor(command: string, args: readonly string[]): string | undefined {
  if (args.some((a) => HELP.has(a))) return undefined;
  switch (command) {
    case "export":
      return EXPORT_LOCK;
    case "play":
      return ONNX_LOCK;
    case "eval":
      return (flagValue(args, "--engine") ?? "wgsl").startsWith("onnx") ? ONNX_LOCK : undefined;
    case "bench":
      return args[0] === "model" && !args.includes("--no-onnx") && flagValue(args, "--size") !== "0.5b"
        ? ONNX_LOCK
        : undefined;
    default:
      return undefined;
  }
}

/** The entries that re-run themselves: the program's (src/cli/main.ts) and the benchmarks' (bench/main.ts). */
const ENTRIES = ["/src/cli/main.ts", "/bench/main.ts"];

/**
 * Runs `entry ARGS` again under an ONNX lock when they need one and this process is not that child already;
 * resolves to the child's exit code, or undefined when this process should go on itself. Signals reach the child.
 * `command` names the command when the entry is that command's own (bench/main.ts: `bench`); the program's entry
 * takes it as the first of `args`.
 */
export async function runUnderOnnxLock(
  entry: URL,
  args: readonly string[],
  command?: string,
): Promise<number | undefined> {
  const [name = "", ...rest] = command ? [command, ...args] : args;
  const needed = onnxLockFor(name, rest);
  if (!needed || Deno.env.get(ONNX_LOCK_ENV) || !ENTRIES.some((e) => entry.pathname.endsWith(e))) return undefined;
  const lock = new URL(`../../${needed}`, import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `--lock=${lock}`, "--frozen", "--node-modules-dir=none", entry.pathname, ...args],
    env: { [ONNX_LOCK_ENV]: "1", DENO_NO_UPDATE_CHECK: "1" },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  const forward = signals.map((s) => {
    const f = () => {
      try {
        child.kill(s);
      } catch { /* the child has exited already */ }
    };
    Deno.addSignalListener(s, f);
    return [s, f] as const;
  });
  try {
    return (await child.status).code;
  } finally {
    for (const [s, f] of forward) Deno.removeSignalListener(s, f);
  }
}
