/**
 * `deno task bundle` and `deno task compile`: the one-file distributions. The bundle is a single JavaScript file,
 * shaders and configs included (text imports), that `deno run -A dist/crucible.js <command>` executes from any
 * folder. The binary needs Deno's `denort` runtime, which `deno compile` downloads from Deno's release server or
 * takes from DENORT_BIN; where neither works, this says so instead of failing obscurely.
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const ENTRY = `${ROOT}src/cli/main.ts`;

async function deno(args: string[]): Promise<{ code: number; out: string }> {
  const r = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout) + d.decode(r.stderr) };
}

/** Builds `what` into dist/. */
export async function build(what: string): Promise<string> {
  await Deno.mkdir(`${ROOT}dist`, { recursive: true });
  if (what === "bundle") {
    const out = `${ROOT}dist/crucible.js`;
    const r = await deno(["bundle", "--lock=deno.lock", "--platform", "deno", "-o", out, ENTRY]);
    if (r.code !== 0) throw new Error(`deno bundle failed:\n${r.out}`);
    return out;
  }
  if (what === "compile") {
    const out = `${ROOT}dist/crucible`;
    const r = await deno(["compile", "-A", "--lock=deno.lock", "--no-check", "--output", out, ENTRY]);
    if (r.code === 0) return out;
    const denort = Deno.env.get("DENORT_BIN");
    throw new Error(
      (denort
        ? `deno compile failed with DENORT_BIN=${denort}; is it the denort of this Deno (${Deno.version.deno})?`
        : "deno compile needs Deno's denort runtime: it downloads it from Deno's release server, which this " +
          "machine cannot reach, and DENORT_BIN is not set. Set DENORT_BIN to a denort binary of Deno " +
          `${Deno.version.deno}, or use \`deno task bundle\` (dist/crucible.js runs with \`deno run -A\`).`) +
        `\n--- deno compile said ---\n${r.out.trim().split("\n").slice(-6).join("\n")}`,
    );
  }
  throw new RangeError(`Unknown build "${what}"; use bundle or compile`);
}

if (import.meta.main) {
  try {
    console.log(`Wrote ${await build(Deno.args[0] ?? "bundle")}`);
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
