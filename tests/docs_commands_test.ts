// Every `deno task` line in the fenced shell blocks of README.md and the guides (docs/*.md; the lab notes in
// docs/notes/ keep their commands as they were run) runs as written: its task exists in deno.json, and a command of
// the program runs through bash the way tests/cli/help_examples_test.ts runs the helps' examples (tests/cli/examples.ts:
// config for real, the rest as a dry run that checks flags, config and overrides and stops before any work), so a guide
// that names a flag, a config key, a config or a task that does not exist fails here. The other tasks (test, ok,
// bundle, ...) only have to exist. A `--resume` of a run folder the docs name as a placeholder gets a stand-in folder.
import assert from "node:assert/strict";
import { documents, fencedCommands, withoutEnv } from "./docs.ts";
import { runExample } from "./cli/examples.ts";

const ROOT = new URL("../", import.meta.url);
const TASKS: Record<string, string> = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks;

/** The tasks that run the program (`deno run ... src/cli/main.ts ...`): their lines run; the rest only must exist. */
const PROGRAM = new Set(Object.entries(TASKS).filter(([, run]) => run.includes("src/cli/main.ts")).map(([t]) => t));

/** The task a command line names (`deno task NAME ...`). */
function taskOf(line: string): string {
  return withoutEnv(line).split(/\s+/)[2] ?? "";
}

/** A line without its trailing `# comment` and continuation, for a test's name. */
function shown(line: string): string {
  return line.replace(/\s+#[^"'\n]*$/gm, "").replace(/\s*\\\n\s*/g, " ").trim();
}

/**
 * The line to run: `deno task train --resume DIR` of a run folder the docs name as a placeholder (`RUN_DIR`) resumes
 * `standIn` instead, a folder holding only a run's `config.yaml` (the smoke config), which is all a dry run reads.
 */
async function resumable(line: string, standIn: string): Promise<string> {
  const m = /^(.*?deno task train .*--resume\s+)(\S+)/.exec(line);
  if (!m) return line;
  const exists = await Deno.stat(new URL(`${m[2]}/config.yaml`, ROOT)).then(() => true, () => false);
  if (exists) return line;
  await Deno.copyFile(new URL("configs/textcraft_smoke.yaml", ROOT), `${standIn}/config.yaml`);
  return line.replace(m[0], `${m[1]}${standIn}`);
}

const guides = (await documents()).filter((d) => !d.startsWith("docs/notes/"));
const lines = new Map<string, string[]>();
for (const doc of guides) lines.set(doc, fencedCommands(await Deno.readTextFile(new URL(doc, ROOT))));

Deno.test("the command lines are read from the fenced blocks, continued lines joined", () => {
  const text = "Run `deno task nope` (prose).\n```sh\nbash .ci/setup && deno task train textcraft\n" +
    "deno task eval --model m \\\n  --json   # a comment\nls\n```\n```ts\ndeno task not-shell\n```\n";
  assert.deepEqual(fencedCommands(text), [
    "deno task train textcraft",
    "deno task eval --model m \\\n  --json   # a comment",
  ]);
  // An exported variable carries into the block's later lines; an assignment before the command is kept.
  const env = "```sh\nexport KEY=$(openssl rand -hex 16)\ndeno task serve-model --host 0.0.0.0\n" +
    "TOKEN=abc deno task serve textcraft\n```\n";
  assert.deepEqual(fencedCommands(env), [
    "export KEY=$(openssl rand -hex 16); deno task serve-model --host 0.0.0.0",
    "export KEY=$(openssl rand -hex 16); TOKEN=abc deno task serve textcraft",
  ]);
  assert.equal(withoutEnv("export K=$(a b); T=$(c d) U=1 deno task serve textcraft"), "deno task serve textcraft");
  assert.equal(shown("deno task eval --model m \\\n  --json   # a comment"), "deno task eval --model m --json");
});

Deno.test("the guides show commands, and every one names a task of deno.json", () => {
  const all = [...lines.values()].flat();
  assert.ok(all.length >= 40, `${all.length} command lines`);
  for (const doc of ["README.md", "docs/getting-started.md", "docs/configs.md", "docs/own-environment.md"]) {
    assert.ok((lines.get(doc) ?? []).length > 0, `${doc} shows no command`);
  }
  const unknown = [...lines].flatMap(([doc, ls]) => ls.filter((l) => !(taskOf(l) in TASKS)).map((l) => `${doc}: ${l}`));
  assert.deepEqual(unknown, [], `tasks of deno.json: ${Object.keys(TASKS).join(", ")}`);
});

Deno.test("a line with a flag or a config key that does not exist fails the way the guides' lines are run", async () => {
  for (
    const bad of ["deno task eval --model models/crucible-tiny --modle x", "deno task train textcraft actor.lrr=1"]
  ) {
    const r = await runExample(bad);
    assert.notEqual(r.code, 0, `${bad} passed:\n${r.out}`);
    assert.match(r.err, /did you mean/, r.err);
  }
});

for (const [doc, docLines] of lines) {
  const runnable = [...new Set(docLines)].filter((l) => PROGRAM.has(taskOf(l)));
  if (runnable.length === 0) continue;
  Deno.test(`${doc}: its ${runnable.length} deno task lines run (dry where costly)`, async () => {
    const standIn = await Deno.makeTempDir({ prefix: "crucible-docs-run-" });
    const failed: string[] = [];
    try {
      for (const line of runnable) {
        const r = await runExample(await resumable(line, standIn));
        const help = /(^|\s)--help(\s|$)/.test(line);
        const ok = r.code === 0 && (r.real || (help ? /^Usage: /m.test(r.out) : /^dry run: /m.test(r.out)));
        if (!ok) failed.push(`${shown(line)}\n  exit ${r.code}: ${(r.err.trim() || r.out.trim()).split("\n").pop()}`);
      }
    } finally {
      await Deno.remove(standIn, { recursive: true });
    }
    assert.deepEqual(failed, []);
  });
}
