// Every example in every --help runs as shown: each is taken from the help text and run through bash at the
// repository root, exactly as written. The cheap ones run for real (config, generate on the tiny model); the rest run
// with CRUCIBLE_DRY_RUN=1, which checks their flags (and config) and stops before any model or work.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const COMMANDS = [
  "train",
  "pretrain",
  "sft",
  "eval",
  "generate",
  "grad",
  "config",
  "report",
  "serve",
  "serve-model",
  "worker",
  "cluster",
  "export",
  "play",
  "bench",
  "bench kernels",
  "bench model",
  "bench train",
  "bench vs-torch",
  "bench faults",
  "bench recall",
  "bench soak",
  "bench bfcl-server",
  "bench bfcl-replay",
  "bench serve",
  "bench cluster",
];

/** Examples that run for real: cheap and harmless. The rest run as a dry run. */
const REAL = [/^deno task config /, /^deno task generate --model models\/crucible-tiny /];

async function run(cmd: string[], env: Record<string, string> = {}) {
  const r = await new Deno.Command(cmd[0], { args: cmd.slice(1), cwd: ROOT, env, stdout: "piped", stderr: "piped" })
    .output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr) };
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

const helps = new Map<string, string>();
for (const command of COMMANDS) {
  const r = await runCli([...command.split(" "), "--help"]);
  assert.equal(r.code, 0, r.err);
  helps.set(command, r.out);
}

Deno.test("the examples are found (so the runs below cover every help)", () => {
  const all = [...helps.values()].flatMap(examplesOf);
  assert.ok(all.length >= 30, `${all.length} examples`);
  for (const c of COMMANDS.filter((c) => !c.startsWith("bench "))) {
    assert.ok(examplesOf(helps.get(c)!).length >= 2, `${c} shows fewer than two examples`);
  }
  assert.ok(all.some((e) => e.includes("\\\n")), "a continued example is joined");
});

for (const [command, help] of helps) {
  for (const example of examplesOf(help)) {
    const real = REAL.some((r) => r.test(example));
    Deno.test({
      name: `${command} --help example runs${real ? "" : " (dry run)"}: ${example.split("\n")[0]}`,
      ignore: real && example.includes("generate") && noGpu,
      async fn() {
        const r = await run(
          ["bash", "-c", example],
          real ? { NO_COLOR: "1" } : { CRUCIBLE_DRY_RUN: "1", NO_COLOR: "1" },
        );
        assert.equal(r.code, 0, `${example}\n${r.err}`);
        if (!real) assert.match(r.out, /^dry run: /m);
        if (real && example.includes("generate")) {
          const words = r.out.trim().split(/\s+/);
          assert.ok(new Set(words).size >= 4, `one word repeated: ${r.out}`);
          assert.match(r.out, /Action: /);
        }
        if (example.includes("--explain")) assert.match(r.out, /meaning: .+\n {2}type: .+\n {2}default: /);
      },
    });
  }
}
