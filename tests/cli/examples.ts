/**
 * Runs a command line as the docs and the helps show it: through bash at the repository root, exactly as written. The
 * cheap ones run for real (config, generate on the tiny model); the rest with CRUCIBLE_DRY_RUN=1, which checks their
 * flags (and config) and stops before any model or work, printing "dry run: ...". Shared by
 * tests/cli/help_examples_test.ts (every --help's examples) and tests/docs_commands_test.ts (the guides' fenced
 * `deno task` lines).
 */

const ROOT = new URL("../../", import.meta.url).pathname;

/** Examples that run for real: cheap and harmless. The rest run as a dry run. */
export const REAL: readonly RegExp[] = [/^deno task config /, /^deno task generate --model models\/crucible-tiny /];

/** Whether `example` runs for real rather than as a dry run. */
export function isReal(example: string): boolean {
  return REAL.some((r) => r.test(example));
}

/** What a command line printed, how it ended, and whether it ran for real. */
export interface ExampleRun {
  code: number;
  out: string;
  err: string;
  real: boolean;
}

/**
 * Runs `example` (one command line, possibly continued with `\` and a newline) through bash at the repository root,
 * as a dry run unless it is one of {@linkcode REAL}.
 *
 * @example
 * ```ts
 * const r = await runExample("deno task eval --model models/crucible-tiny");
 * r.out; // "dry run: would evaluate models/crucible-tiny on the test split (engine wgsl)\n"
 * ```
 */
export async function runExample(example: string): Promise<ExampleRun> {
  const real = isReal(example);
  const env: Record<string, string> = real ? { NO_COLOR: "1" } : { CRUCIBLE_DRY_RUN: "1", NO_COLOR: "1" };
  const r = await new Deno.Command("bash", { args: ["-c", example], cwd: ROOT, env, stdout: "piped", stderr: "piped" })
    .output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr), real };
}

/** The examples of a help text: lines under "Examples:" that start with `deno `, with their continuation lines. */
export function examplesOf(help: string): string[] {
  const lines = help.split("\nExamples:\n")[1]?.split("\n") ?? [];
  const out: string[] = [];
  for (const line of lines) {
    if (line.trim().startsWith("deno ")) out.push(line.trim());
    else if (out.length && out[out.length - 1].endsWith("\\")) out[out.length - 1] += `\n${line}`;
  }
  return out;
}
