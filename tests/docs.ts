/**
 * The documents the docs tests read: README.md and every Markdown file under docs/ (the guides, their index and the
 * lab notes), and the `deno task` command lines of a document's fenced shell blocks.
 */

const ROOT = new URL("../", import.meta.url);

/** README.md and every Markdown file under `dir` (default docs/), its subfolders included, sorted. */
export async function documents(dir = "docs/", found: string[] = ["README.md"]): Promise<string[]> {
  for await (const e of Deno.readDir(new URL(dir, ROOT))) {
    if (e.isDirectory) await documents(`${dir}${e.name}/`, found);
    else if (e.isFile && e.name.endsWith(".md")) found.push(`${dir}${e.name}`);
  }
  return found.sort();
}

/** Info strings of the fenced blocks that hold shell command lines (an unlabelled block may hold one too). */
const SHELL = new Set(["", "sh", "bash", "shell"]);

/** Environment assignments before a command (`A=1 B=$(cmd x) `). */
const ASSIGNMENTS = String.raw`(?:[A-Z_][A-Z0-9_]*=(?:\$\([^)]*\)|\S+)\s+)*`;

/** A command line: `deno task`, after any environment assignments. */
const COMMAND = new RegExp(`^${ASSIGNMENTS}deno task `);

/**
 * A command line less the exports carried into it and its leading assignments (`export A=1; B=2 deno task x` ->
 * `deno task x`).
 */
export function withoutEnv(line: string): string {
  return line.replace(/^(?:export [^;]*; )*/, "").replace(new RegExp(`^${ASSIGNMENTS}`), "");
}

/**
 * The `deno task ...` command lines of a Markdown text's fenced shell blocks: a line that starts with `deno task`
 * (after any `NAME=value` environment assignments), or the part of a line after `&&` that does, with its continuation
 * lines (a line ending in `\`) joined by a newline, as bash reads them; a trailing `# comment` is kept (bash drops
 * it). An `export NAME=value` line carries into the block's later commands as an `export NAME=value; ` prefix, as
 * a shell session carries it.
 *
 * @example
 * ```ts
 * fencedCommands("```sh\nbash .ci/setup && deno task train textcraft\n```\n"); // ["deno task train textcraft"]
 * ```
 */
export function fencedCommands(markdown: string): string[] {
  const out: string[] = [];
  for (const block of markdown.matchAll(/^```([\w-]*)[^\n]*\n([\s\S]*?)^```/gm)) {
    if (!SHELL.has(block[1])) continue;
    const lines: string[] = [];
    for (const line of block[2].split("\n")) {
      if (lines.length && lines[lines.length - 1].endsWith("\\")) lines[lines.length - 1] += `\n${line}`;
      else lines.push(line);
    }
    let env = "";
    for (const line of lines) {
      if (/^export\s+[A-Z_][A-Z0-9_]*=/.test(line.trim())) env += `${line.trim().replace(/\s+#.*$/, "")}; `;
      for (const part of line.split("&&")) {
        if (COMMAND.test(part.trim())) out.push(`${env}${part.trim()}`);
      }
    }
  }
  return out;
}
