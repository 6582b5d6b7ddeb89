/**
 * Runs Deno as a user runs Crucible's tasks: a subprocess at the repository root, its output captured. `CLI` runs
 * `deno run -A --lock=deno.lock src/cli/main.ts` as `deno task NAME` does (`BENCH` bench/main.ts, as `deno task bench`);
 * `TASK_FLAGS` run the program under tests/deno.lock (which also pins onnxruntime-web and the protobuf package) and
 * Deno's global package cache; the ONNX command lines re-run themselves under src/onnx/deno.lock
 * (src/command/onnx_lock.ts). The one place the tests start Deno: the cluster tests' learner and workers, the
 * servers and the interrupted runs come from `spawnCli`, the rest from `runDeno`/`runCli`.
 */

const ROOT = new URL("../", import.meta.url).pathname;

/** `deno run` flags for the program as `deno task` runs it (the root deno.json and deno.lock), ending with it. */
export const CLI = ["run", "-A", "--lock=deno.lock", "src/cli/main.ts"];

/** `deno run` flags for the program under the test lock, ending with the program. */
export const TASK_FLAGS = ["run", "-A", "--lock=tests/deno.lock", "--node-modules-dir=none", "src/cli/main.ts"];

/** `deno run` flags for the benchmarks as `deno task bench` runs them: their own entry, outside the program. */
export const BENCH = ["run", "-A", "--lock=deno.lock", "bench/main.ts"];

/** `deno run` flags for the benchmarks under the test lock, ending with their entry. */
export const BENCH_TASK_FLAGS = ["run", "-A", "--lock=tests/deno.lock", "--node-modules-dir=none", "bench/main.ts"];

/** The `deno` arguments of `deno task ARGS[0] ARGS[1..]`: the program's entry, or the benchmarks' for `bench`. */
function taskArgs(args: readonly string[]): string[] {
  return args[0] === "bench" ? [...BENCH, ...args.slice(1)] : [...CLI, ...args];
}

/** What a finished subprocess printed, and how it ended (`signal` is set where a signal killed it). */
export interface Ran {
  code: number;
  signal: Deno.Signal | null;
  out: string;
  err: string;
}

/** Where a subprocess runs: variables added to this process's environment, and its folder (the repository root). */
export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
}

/** `deno ARGS` with stdout and stderr piped, at the repository root unless `o.cwd` says otherwise. */
function command(args: string[], o: RunOptions): Deno.Command {
  return new Deno.Command(Deno.execPath(), { args, cwd: o.cwd ?? ROOT, env: o.env, stdout: "piped", stderr: "piped" });
}

/**
 * Runs `deno ARGS` and waits for it.
 *
 * @example
 * ```ts
 * const r = await runDeno([...TASK_FLAGS, "export", "--help"]);
 * ```
 */
export async function runDeno(args: string[], o: RunOptions = {}): Promise<Ran> {
  const r = await command(args, o).output();
  const d = new TextDecoder();
  return { code: r.code, signal: r.signal, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}

/**
 * Runs `deno run -A src/cli/main.ts ARGS` (a `deno task` command; `bench` runs bench/main.ts) and waits for it.
 *
 * @example
 * ```ts
 * const r = await runCli(["config", "textcraft"], { env: { NO_COLOR: "1" } });
 * ```
 */
export async function runCli(args: string[], o: RunOptions = {}): Promise<Ran> {
  return await runDeno(taskArgs(args), o);
}

/** A running Crucible command. */
export interface Proc {
  child: Deno.ChildProcess;
  /** stdout and stderr so far, in the order they came. */
  output(): string;
  /** stdout so far. */
  out(): string;
  /** stderr so far. */
  err(): string;
  /** Resolves when it exits and both streams are read, with its code and signal. */
  done: Promise<Deno.CommandStatus>;
}

/**
 * Starts `deno run -A src/cli/main.ts ARGS` (bench/main.ts for `bench`), collecting its output as it comes.
 *
 * @example
 * ```ts
 * const p = spawnCli(["serve", "textcraft", "--port", "0"]);
 * const url = /listening on (\S+)/.exec(await firstLine(p, "out"))![1];
 * await end(p);
 * ```
 */
export function spawnCli(args: string[], o: RunOptions = {}): Proc {
  const child = command(taskArgs(args), o).spawn();
  const text = { all: "", out: "", err: "" };
  const collect = async (s: ReadableStream<Uint8Array>, key: "out" | "err") => {
    const d = new TextDecoder();
    for await (const chunk of s) {
      const t = d.decode(chunk, { stream: true });
      text[key] += t;
      text.all += t;
    }
  };
  const streams = Promise.all([collect(child.stdout, "out"), collect(child.stderr, "err")]);
  return {
    child,
    output: () => text.all,
    out: () => text.out,
    err: () => text.err,
    done: streams.then(() => child.status),
  };
}

/** The first line of a running command's stdout or stderr; throws with what it printed if it exits first. */
export async function firstLine(p: Proc, stream: "out" | "err"): Promise<string> {
  let exited = false;
  p.done.then(() => exited = true);
  for (;;) {
    const over = exited; // read before the text: once it is set, the text is all there is
    const text = stream === "out" ? p.out() : p.err();
    if (text.includes("\n")) return text.slice(0, text.indexOf("\n"));
    if (over) throw new Error(`the command exited before a line on std${stream}: ${p.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Ends a process started by this test (SIGTERM) and waits for it. */
export async function end(p: Proc): Promise<Deno.CommandStatus> {
  try {
    p.child.kill("SIGTERM");
  } catch { /* already exited */ }
  return await p.done;
}

/** The SHA-256 of a file, in hex: files compared bit for bit. */
export async function sha(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
