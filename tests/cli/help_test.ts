// Every command's --help explains itself: what it does, every option with its meaning, and two examples.
import assert from "node:assert/strict";
import { runCli } from "../subprocess.ts";

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
