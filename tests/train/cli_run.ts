/** Helpers of the tests that run Crucible's commands as a user does: a subprocess in the repository root. */

const ROOT = new URL("../../", import.meta.url).pathname;

/** What a command did. */
export interface CliResult {
  code: number;
  signal: string | null;
  out: string;
  err: string;
}

/** Runs `deno run -A src/cli/main.ts ...args` with extra environment variables; output captured. */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "src/cli/main.ts", ...args],
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: r.code, signal: r.signal, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}

/** The SHA-256 of a file, in hex: files compared bit for bit. */
export async function sha(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
