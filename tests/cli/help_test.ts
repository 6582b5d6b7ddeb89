// Every command's --help explains itself: what it does, every option with its meaning, and two examples.
import assert from "node:assert/strict";
import { runCli, runDeno } from "../subprocess.ts";

const COMMANDS = [
  "train",
  "pretrain",
  "eval",
  "config",
  "sft",
  "generate",
  "grad",
  "serve",
  "serve-model",
  "bench",
  "report",
  "export",
  "play",
  "worker",
  "cluster",
];

async function help(args: string[]): Promise<string> {
  const r = await runCli([...args, "--help"]);
  assert.equal(r.code, 0, r.err);
  return r.out;
}

for (const command of COMMANDS) {
  Deno.test(`deno task ${command} --help lists its options and gives two examples`, async () => {
    const text = await help([command]);
    assert.match(text, new RegExp(`^Usage: deno task ${command}`));
    assert.match(text, /\n(Options|Subcommands):\n/);
    const examples = text.split("\nExamples:\n")[1]?.split("\n").filter((l) => l.trim().startsWith("deno ")) ?? [];
    assert.ok(examples.length >= 2, `${command}: examples ${JSON.stringify(examples)}`);
  });
}

for (const what of ["bundle", "compile"]) {
  Deno.test(`deno task ${what} --help prints its help and builds nothing; an unknown argument is refused`, async () => {
    const dist = new URL("../../dist/", import.meta.url);
    const before = await Array.fromAsync(Deno.readDir(dist)).catch(() => []);
    const r = await runDeno(["run", "-A", "--lock=deno.lock", "src/cli/build.ts", what, "--help"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`^Usage: deno task ${what}\n`));
    assert.match(r.out, /\nOptions:\n/);
    assert.doesNotMatch(r.out + r.err, /Wrote /);
    assert.deepEqual(await Array.fromAsync(Deno.readDir(dist)).catch(() => []), before, "dist/ changed");
    const bad = await runDeno(["run", "-A", "--lock=deno.lock", "src/cli/build.ts", what, "--out", "x"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, new RegExp(`deno task ${what} takes no arguments, got "--out x"`));
  });
}
