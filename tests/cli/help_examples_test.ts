// Every example in every --help runs as shown: each is taken from the help text and run through bash at the
// repository root, exactly as written (tests/cli/examples.ts). The cheap ones run for real (config, generate on the
// tiny model); the rest run with CRUCIBLE_DRY_RUN=1, which checks their flags (and config) and stops before any model
// or work.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";
import { examplesOf, isReal, runExample } from "./examples.ts";

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
  "bench roofline",
  "bench gpu",
  "bench faults",
  "bench recall",
  "bench soak",
  "bench bfcl-server",
  "bench bfcl-replay",
  "bench serve",
  "bench cluster",
];

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

Deno.test("every run folder an example reads is one an example makes, and none overwrites a shipped model", () => {
  // A fresh clone has no runs/: an example that reads runs/NAME is only copyable where another one writes it.
  const all = [...helps.values()].flatMap(examplesOf).map((e) => e.replace(/\s+#.*$/gm, ""));
  const made = new Set(all.flatMap((e) => [...e.matchAll(/--run-dir (runs\/[\w.-]+)/g)].map((m) => m[1])));
  const read = all.flatMap((e) =>
    [...e.replace(/--run-dir runs\/[\w.-]+/g, "").matchAll(/(?<![\w/])(runs\/[\w.-]+)/g)].map((m) => m[1])
  );
  assert.ok(read.includes("runs/smoke"), "the examples read the smoke run's folder");
  assert.deepEqual(
    read.filter((r) => !made.has(r)),
    [],
    `run folders no example makes (made: ${[...made].join(", ")})`,
  );
  const shipped = [...Deno.readDirSync(new URL("../../models/", import.meta.url))].map((d) => `models/${d.name}`);
  for (const e of all) {
    for (const m of e.matchAll(/--(?:save-model|out) (models\/[\w.-]+)/g)) {
      assert.ok(!shipped.includes(m[1]), `${e} overwrites the shipped ${m[1]}`);
    }
  }
});

for (const [command, help] of helps) {
  for (const example of examplesOf(help)) {
    const real = isReal(example);
    Deno.test({
      name: `${command} --help example runs${real ? "" : " (dry run)"}: ${example.split("\n")[0]}`,
      ignore: real && example.includes("generate") && noGpu,
      async fn() {
        const r = await runExample(example);
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
