/**
 * `deno task config --explain KEY`: a config key's meaning, type, default and the names verl and TRL give it. The
 * meanings are the doc comments of src/config/schema.ts, read from its source text (imported as text, so they are
 * written once, beside the key); types and defaults come from the zod schema itself; the other frameworks' names
 * from src/config/aliases.ts.
 *
 * The reader below is hand-written because it only has to follow schema.ts's own shape: `const Name =
 * z.strictObject({ ... })` sections whose entries are `/** doc *\/ key: expression,`, an expression being another
 * section (`Name.default(...)`) or an inline `z.strictObject({ ... })`.
 */
import schemaText from "./schema.ts" with { type: "text" };
import { ADVANTAGE_ESTIMATORS } from "../rl/estimators.ts";
import { KL_ESTIMATORS } from "../rl/kl.ts";
import { POLICY_LOSSES } from "../rl/policy_losses.ts";
import type { Registered, Registry } from "../rl/registry.ts";
import { TRL_NAMES, VERL_ALIASES } from "./aliases.ts";
import { closest, keysAt } from "./load.ts";
import { RunConfig } from "./schema.ts";

/** The registries of RL algorithms, each with the config key that picks from it (src/rl/registry.ts). */
export const REGISTRIES: readonly Registry<Registered>[] = [ADVANTAGE_ESTIMATORS, POLICY_LOSSES, KL_ESTIMATORS];

interface Entry {
  doc?: string;
  /** The section constant the entry's value is (`Model.default(...)` -> Model). */
  ref?: string;
  /** Entries of an inline z.strictObject. */
  inline?: Map<string, Entry>;
}

/** The source with comments other than doc comments and string contents blanked, offsets kept. */
function blank(src: string): string {
  return src.replace(
    /\/\*\*[\s\S]*?\*\/|\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`/g,
    (m) => (m.startsWith("/**") ? m : m[0] === "/" ? " ".repeat(m.length) : m[0] + " ".repeat(m.length - 2) + m[0]),
  );
}

/** The index just past the bracket that closes the one at `open`. */
function closing(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s.startsWith("/**", i)) {
      i = s.indexOf("*/", i) + 1;
      continue;
    }
    if ("({[".includes(s[i])) depth++;
    else if (")}]".includes(s[i]) && --depth === 0) return i + 1;
  }
  throw new SyntaxError(`src/config/schema.ts: unbalanced bracket at offset ${open}`);
}

function docText(comment: string): string {
  return comment.replace(/^\/\*\*|\*\/$/g, "").split("\n").map((l) => l.replace(/^\s*\* ?/, "").trim())
    .filter(Boolean).join(" ");
}

/** The entries of the object body between `from` and `to` (just inside its braces). */
function entries(s: string, from: number, to: number): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const re = /\s*(\/\*\*[\s\S]*?\*\/)?\s*(\w+):\s*/y;
  let i = from;
  while (i < to) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m || m.index + m[0].length > to) break;
    let j = re.lastIndex;
    const start = j;
    while (j < to && s[j] !== ",") j = "({[".includes(s[j]) ? closing(s, j) : j + 1;
    const value = s.slice(start, j);
    const entry: Entry = { doc: m[1] ? docText(m[1]) : undefined };
    const ref = /^([A-Z]\w*)\./.exec(value)?.[1];
    if (ref) entry.ref = ref;
    const inline = value.indexOf("z.strictObject({");
    if (inline === 0) {
      const open = start + "z.strictObject(".length;
      entry.inline = entries(s, open + 1, closing(s, open) - 1);
    }
    out.set(m[2], entry);
    i = j + 1;
  }
  return out;
}

/** Path ("actor.lr") -> its doc comment, for every key of the schema. */
function readDocs(src: string): Map<string, string | undefined> {
  const s = blank(src);
  const sections = new Map<string, Map<string, Entry>>();
  for (const m of s.matchAll(/(?:export )?const (\w+) = z\.strictObject\(\{/g)) {
    const open = m.index + m[0].length - 1;
    sections.set(m[1], entries(s, open + 1, closing(s, open) - 1));
  }
  const docs = new Map<string, string | undefined>();
  const walk = (prefix: string, body: Map<string, Entry>) => {
    for (const [key, e] of body) {
      const path = prefix ? `${prefix}.${key}` : key;
      docs.set(path, e.doc);
      const sub = e.inline ?? (e.ref ? sections.get(e.ref) : undefined);
      if (sub) walk(path, sub);
    }
  };
  walk("", sections.get("RunConfig") ?? new Map());
  return docs;
}

let cached: Map<string, string | undefined> | undefined;

/** Every config key's path with its doc comment (undefined where schema.ts has none). */
export function keyDocs(): Map<string, string | undefined> {
  return cached ??= readDocs(schemaText);
}

// deno-lint-ignore no-explicit-any
function schemaAt(path: readonly string[]): any {
  // deno-lint-ignore no-explicit-any
  let node: any = RunConfig;
  for (const p of path) {
    while (node?.def?.innerType) node = node.def.innerType;
    node = node?.shape?.[p];
  }
  return node;
}

// deno-lint-ignore no-explicit-any
function typeOf(node: any): string {
  const def = node?.def;
  if (!def) return "unknown";
  switch (def.type) {
    case "default":
      return typeOf(def.innerType);
    case "nullable":
      return `${typeOf(def.innerType)} or null`;
    case "enum":
      return `one of ${Object.values(def.entries).join(", ")}`;
    case "number":
      return node.isInt ? "integer" : "number";
    case "array":
      return `list of ${typeOf(def.element)}`;
    case "tuple":
      return `[${def.items.map(typeOf).join(", ")}]`;
    case "union":
      return def.options.map(typeOf).join(" or ");
    case "record":
      return "mapping";
    case "object":
      return "section";
    default:
      return def.type;
  }
}

/**
 * The explanation of `key` (a Crucible path, or a verl/AgentGym-RL name for one): meaning, type, default and the
 * other frameworks' names; for a section, its keys with their meanings. An unknown key is a RangeError with the
 * nearest keys.
 *
 * @example
 * ```ts
 * console.log(explainKey("actor.lr")); // actor.lr: the actor's learning rate ... default 0.000001, verl: ...
 * ```
 */
export function explainKey(key: string): string {
  const docs = keyDocs();
  const path = VERL_ALIASES[key] ?? key;
  if (!docs.has(path)) {
    const near = closest(path, [...docs.keys()]);
    const parent = path.split(".").slice(0, -1);
    const siblings = keysAt(parent);
    throw new RangeError(
      `Unknown config key "${key}"${near ? `; did you mean "${near}"?` : "."} ` +
        (siblings.length && parent.length
          ? `The keys of ${parent.join(".")} are: ${siblings.join(", ")}.`
          : `The sections are: ${keysAt([]).join(", ")}.`) +
        " `deno task config` prints them all with their values.",
    );
  }
  const parts = path.split(".");
  const node = schemaAt(parts);
  // deno-lint-ignore no-explicit-any
  const fallback: any = parts.reduce((o: any, p) => o?.[p], RunConfig.parse({}));
  const lines = [`${path}${path !== key ? ` (verl's ${key})` : ""}`];
  lines.push(`  meaning: ${docs.get(path) ?? "(no description in src/config/schema.ts)"}`);
  const type = typeOf(node);
  if (type === "section") {
    for (const k of keysAt(parts)) {
      const d = docs.get(`${path}.${k}`);
      lines.push(`  ${path}.${k}${d ? `: ${d.length > 90 ? `${d.slice(0, 87)}...` : d}` : ""}`);
    }
    return lines.join("\n");
  }
  const registry = REGISTRIES.find((r) => r.key === path);
  lines.push(`  type:    ${registry ? `the name of a registered ${registry.what} (listed below)` : type}`);
  lines.push(
    `  default: ${
      fallback === undefined ? `none (${parts.slice(0, -1).join(".")} defaults to null)` : JSON.stringify(fallback)
    }`,
  );
  if (registry) lines.push("  registered:", ...registeredLines(registry, "    "));
  const verl = Object.entries(VERL_ALIASES).filter(([, to]) => to === path).map(([from]) => from);
  if (verl.length) lines.push(`  verl:    ${verl.join(", ")}`);
  if (TRL_NAMES[path]) lines.push(`  TRL:     ${TRL_NAMES[path]}`);
  lines.push(`  set it:  deno task train textcraft ${path}=VALUE   (or in a YAML config)`);
  return lines.join("\n");
}

/** Each entry of a registry: its name and what it computes, then the config keys it reads. */
function registeredLines(r: Registry<Registered>, indent: string): string[] {
  return r.entries().flatMap((e) => [
    `${indent}${e.name}: ${e.summary}`,
    ...(e.keys.length ? [`${indent}  reads ${e.keys.join(", ")}`] : []),
  ]);
}

/**
 * Every registered RL algorithm (`deno task config --algorithms`): for each registry, the key that picks from it and
 * its entries with the config keys each reads.
 *
 * @example
 * ```ts
 * console.log(explainAlgorithms()); // algorithm.adv_estimator picks the advantage estimator (default grpo), ...
 * ```
 */
export function explainAlgorithms(): string {
  const defaults = RunConfig.parse({});
  return REGISTRIES.map((r) => {
    // deno-lint-ignore no-explicit-any
    const fallback = r.key.split(".").reduce((o: any, p) => o?.[p], defaults);
    return [`${r.key} picks the ${r.what} (default ${fallback}), one of:`, ...registeredLines(r, "  ")].join("\n");
  }).join("\n\n");
}
