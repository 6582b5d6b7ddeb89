// The indexes a newcomer reads first stay whole: docs/configs.md's table of shipped configs names every config
// configs/ ships, and docs/README.md's list of every command names every user task of deno.json, every task
// `deno task serve` serves and every `deno task bench` subcommand.
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { servedTasks } from "../src/cli/serve.ts";
import { PRESET_NAMES } from "../src/config/presets.ts";
import { runCli } from "./subprocess.ts";

const ROOT = new URL("../", import.meta.url);
const read = (path: string) => Deno.readTextFile(new URL(path, ROOT));

/** The text of the Markdown section under `heading` (to the next heading of any level). */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section ${heading}`);
  const rest = markdown.slice(start + heading.length + 2);
  return rest.slice(0, rest.search(/\n#+ /) >>> 0);
}

Deno.test("docs/configs.md's table names every shipped config", async () => {
  const table = section(await read("docs/configs.md"), "## The shipped configs (`configs/`)");
  assert.ok(PRESET_NAMES.length >= 17);
  assert.deepEqual(PRESET_NAMES.filter((n) => !table.includes(`\`${n}\``)), []);
});

Deno.test("docs/README.md's command list names every task, every served task and every bench subcommand", async () => {
  const list = section(await read("docs/README.md"), "## Every command");
  const tasks = Object.keys(denoJson.tasks).filter((t) => !["check", "docs", "serve-model"].includes(t));
  assert.deepEqual(tasks.filter((t) => !list.includes(`deno task ${t}`)), [], "tasks missing");
  const serve = list.split("\n").find((l) => l.includes("`deno task serve "))!;
  assert.deepEqual(servedTasks().filter((t) => !serve.includes(t)), [], "served tasks missing");
  const help = await runCli(["bench", "--help"]);
  const subcommands = [...help.out.split("\nSubcommands:\n")[1].split("\n\n")[0].matchAll(/^ {2}([\w-]+) /gm)]
    .map((m) => m[1]);
  assert.ok(subcommands.length >= 13, subcommands.join(" "));
  const bench = list.split("\n").find((l) => l.includes("`deno task bench "))!;
  assert.deepEqual(subcommands.filter((s) => !bench.includes(s)), [], "bench subcommands missing");
});
