/**
 * Runs Deno as a user runs Crucible's tasks: a subprocess at the repository root, its output captured. `TASK_FLAGS`
 * run the program under tests/deno.lock (which also pins onnxruntime-web and the protobuf package) and Deno's global
 * package cache; the ONNX command lines re-run themselves under src/onnx/deno.lock (src/cli/onnx_lock.ts).
 */

const ROOT = new URL("../", import.meta.url).pathname;

/** `deno run` flags for the program under the test lock, ending with the program. */
export const TASK_FLAGS = ["run", "-A", "--lock=tests/deno.lock", "--node-modules-dir=none", "src/cli/main.ts"];

/** What a finished subprocess printed. */
export interface Ran {
  code: number;
  out: string;
  err: string;
}

/**
 * Runs `deno ARGS` at the repository root and waits for it.
 *
 * @example
 * ```ts
 * const r = await runDeno([...TASK_FLAGS, "export", "--help"]);
 * ```
 */
export async function runDeno(args: string[]): Promise<Ran> {
  const r = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}
