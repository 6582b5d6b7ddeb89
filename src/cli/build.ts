/**
 * `deno task bundle` and `deno task compile`: the one-file distributions. The bundle is a single JavaScript file,
 * shaders and configs included (text imports), that `deno run -A dist/crucible.js <command>` executes from any
 * folder. The binary needs Deno's `denort` runtime, which `deno compile` downloads from Deno's release server or
 * takes from DENORT_BIN; where neither works, this says so instead of failing obscurely.
 */
import { NATS_PACKAGES } from "../cluster/nats_lib.ts";
import { X509_PACKAGE } from "../cluster/tls.ts";
import { HUB_PACKAGE } from "../model/hub.ts";
import { BUFBUILD_WIRE } from "../report/tensorboard.ts";
import { WEBSHOP_PACKAGES } from "../../tasks/webshop/packages.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * The packages only some commands import, on first use, by specifiers held in variables (docs/first-run.md): the
 * bundle leaves them to Deno, which fetches them on first use as `deno task` does; the binary cannot fetch, so
 * `deno compile` includes each by name. (The ONNX packages, 140 MB, stay out of both.)
 */
export const LAZY_PACKAGES: readonly string[] = [
  ...Object.values(NATS_PACKAGES),
  X509_PACKAGE,
  HUB_PACKAGE,
  BUFBUILD_WIRE.replace(/\/wire$/, ""),
  ...Object.values(WEBSHOP_PACKAGES),
];
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
    const r = await deno([
      "compile",
      "-A",
      "--lock=deno.lock",
      "--no-check",
      ...LAZY_PACKAGES.flatMap((p) => ["--include", p]),
      "--output",
      out,
      ENTRY,
    ]);
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

/** The help of `deno task bundle` and `deno task compile`. */
export function usage(what: string): string {
  const text = what === "compile"
    ? `Builds dist/crucible: one executable with Deno's runtime inside (deno compile), shaders, configs and the
packages that only some commands load included. It needs Deno's denort runtime, which deno compile downloads from
Deno's release server or takes from DENORT_BIN.`
    : `Builds dist/crucible.js: one JavaScript file, shaders and configs included (deno bundle), that
\`deno run -A dist/crucible.js <command>\` runs from any folder. The packages that only some commands load are
fetched on their first use, as \`deno task\` fetches them (docs/first-run.md).`;
  return `Usage: deno task ${what}

${text} It takes no options.

Options:
  -h, --help   this text

Examples:
  deno task ${what}
  ${what === "compile" ? "./dist/crucible train --help" : "deno run -A dist/crucible.js train --help"}`;
}

/** Runs `deno task bundle|compile [--help]`: the build, or its help; anything else is refused before building. */
export async function main(args: readonly string[]): Promise<string | undefined> {
  const [what = "bundle", ...rest] = args;
  if (rest.some((a) => a === "--help" || a === "-h")) {
    console.log(usage(what));
    return undefined;
  }
  if (rest.length) {
    throw new RangeError(`deno task ${what} takes no arguments, got "${rest.join(" ")}"; --help says why`);
  }
  return await build(what);
}

if (import.meta.main) {
  try {
    const out = await main(Deno.args);
    if (out) console.log(`Wrote ${out}`);
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
