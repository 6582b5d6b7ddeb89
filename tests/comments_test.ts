// Comments that stay true: a source comment may not cite the design notes that live outside the repository (the
// spec beside the checkout: rl.md, agentgym.md, pretraining.md, function-calling.md, its own webgpu.md, or "spec
// 1.3" / "spec section 3.2"). A reader of the repository cannot open them: a comment states the fact itself or
// names a file of the repository (docs/..., src/...).
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const OUTSIDE =
  /(?<![\w/-])(?:rl|agentgym|pretraining|function-calling|webgpu)\.md\b|\bspec(?:'s)? (?:sections? |table )?\d|\bspec (?:section|table)\b/i;

/** The comment part of a line of TypeScript or WGSL (after `//`, or a JSDoc/block line starting with `*`). */
export function commentOf(line: string): string | undefined {
  const t = line.trim();
  if (t.startsWith("*") || t.startsWith("/*")) return t;
  const at = line.indexOf("//");
  return at >= 0 && !/["'`][^"'`]*$/.test(line.slice(0, at)) ? line.slice(at) : undefined;
}

/** `file:line: text` of every comment under `dir` that cites a note outside the repository. */
async function citations(dir: URL, rel: string, found: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(dir)) {
    if (e.isDirectory && e.name !== "node_modules" && e.name !== "fixtures") {
      await citations(new URL(`${e.name}/`, dir), `${rel}${e.name}/`, found);
    }
    if (!e.isFile || !/\.(ts|wgsl)$/.test(e.name) || e.name === "comments_test.ts") continue;
    const lines = (await Deno.readTextFile(new URL(e.name, dir))).split("\n");
    lines.forEach((line, i) => {
      const c = commentOf(line);
      if (c && OUTSIDE.test(c)) found.push(`${rel}${e.name}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

Deno.test("the citation rule flags the spec's notes and sections, and passes repository paths", () => {
  const cites = (line: string) => OUTSIDE.test(commentOf(line) ?? "");
  assert.ok(cites(" * Loss aggregation (rl.md §1.3)."));
  assert.ok(cites("// SQLGym (spec 1.8): env_idx field"));
  assert.ok(cites(" * upstream's rules (spec section 3.2)"));
  assert.ok(cites(" * see webgpu.md"));
  assert.ok(!cites(" * see docs/webgpu.md and docs/kernel-timings.md"));
  assert.ok(!cites(" * a new estimator: docs/extending-rl.md, or extending-rl.md"));
  assert.ok(!cites('const name = "rl.md";'));
});

Deno.test("no source comment cites a note outside the repository", async () => {
  const found: string[] = [];
  for (const dir of ["src", "tasks", "bench", "shaders", "tests"]) {
    await citations(new URL(`${dir}/`, ROOT), `${dir}/`, found);
  }
  for (const line of (await Deno.readTextFile(new URL("mod.ts", ROOT))).split("\n")) {
    const c = commentOf(line);
    if (c && OUTSIDE.test(c)) found.push(`mod.ts: ${line.trim()}`);
  }
  assert.deepEqual(found, [], "state the fact itself, or cite a file of the repository");
});
