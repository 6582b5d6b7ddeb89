/**
 * The two run-time locks. Every task runs under deno.lock, which pins only what every command loads (zod, yaml, the
 * tokenizer and chat-template packages, about 11 MB). The ONNX packages (onnxruntime-web, about 140 MB, and
 * onnx-proto with protobufjs) are pinned in src/onnx/deno.lock instead, because Deno installs every package of the
 * lock it runs under, whether the program imports it or not. A command line that needs them (`play`, `export`,
 * `eval --engine onnx`, `bench model` without `--no-onnx`) therefore runs again as a child process under that lock;
 * `--help` and flag errors are answered before, so a first look at any command stays light.
 *
 * The child is marked by an environment variable so it never re-runs itself. A bundle or compiled binary carries
 * its packages already and never re-runs (the entry is not src/cli/main.ts there).
 */
import { ONNX_LOCK } from "../onnx/runtime.ts";

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
 * Whether `command args` loads an ONNX package: false for every `--help` and for the commands that never do.
 *
 * @example
 * ```ts
 * needsOnnx("eval", ["--model", "m", "--engine", "onnx"]); // true
 * needsOnnx("play", ["--help"]); // false
 * ```
 */
export function needsOnnx(command: string, args: readonly string[]): boolean {
  if (args.some((a) => HELP.has(a))) return false;
  switch (command) {
    case "play":
    case "export":
      return true;
    case "eval":
      return (flagValue(args, "--engine") ?? "wgsl").startsWith("onnx");
    case "bench":
      return args[0] === "model" && !args.includes("--no-onnx") && flagValue(args, "--size") !== "0.5b";
    default:
      return false;
  }
}

/**
 * Runs `main.ts ARGS` again under the ONNX lock when they need it and this process is not that child already;
 * resolves to the child's exit code, or undefined when this process should go on itself. Signals reach the child.
 */
export async function runUnderOnnxLock(entry: URL, args: readonly string[]): Promise<number | undefined> {
  const [command = "", ...rest] = args;
  if (!needsOnnx(command, rest) || Deno.env.get(ONNX_LOCK_ENV) || !entry.pathname.endsWith("/src/cli/main.ts")) {
    return undefined;
  }
  const lock = new URL(`../../${ONNX_LOCK}`, entry).pathname;
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
