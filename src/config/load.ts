/**
 * Loading a run configuration: a YAML file that holds only what it changes, then `a.b.c=value` overrides (values
 * in YAML syntax: `0.5`, `[10,20,30]`, `true`, `null`, text), then the schema's defaults and checks. Every error
 * names the key's path and what was expected.
 */
import { parse } from "yaml";
import type { z } from "zod";
import { translateOverride } from "./aliases.ts";
import { RunConfig } from "./schema.ts";

/** Where a configuration came from, for messages. */
export interface ConfigSource {
  /** YAML text. */
  text: string;
  /** Its name in messages (a path, or "configs/textcraft.yaml (built in)"). */
  name: string;
}

/** Parses YAML into a plain object, naming the source on a syntax error. */
export function parseYaml(src: ConfigSource): Record<string, unknown> {
  let value: unknown;
  try {
    value = parse(src.text);
  } catch (e) {
    throw new SyntaxError(`${src.name}: not valid YAML (${(e as Error).message.split("\n")[0]})`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new SyntaxError(`${src.name}: the top level must be a mapping of keys, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Applies one `a.b.c=value` override to a raw config object (in place). */
export function applyOverride(raw: Record<string, unknown>, override: string): void {
  const eq = override.indexOf("=");
  if (eq <= 0) throw new SyntaxError(`Override "${override}" must look like key.path=value, e.g. actor.lr=1e-5`);
  const path = override.slice(0, eq).trim().split(".");
  if (path.some((p) => !/^[A-Za-z_][\w]*$/.test(p))) {
    throw new SyntaxError(`Override key "${override.slice(0, eq)}" must be dot-separated names`);
  }
  let value: unknown;
  try {
    value = parse(override.slice(eq + 1));
  } catch {
    value = override.slice(eq + 1);
  }
  let node: Record<string, unknown> = raw;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === undefined || next === null) node[key] = {};
    else if (typeof next !== "object" || Array.isArray(next)) {
      throw new TypeError(`Override "${override}": "${key}" holds a value, not a section of keys`);
    }
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value ?? null;
}

/**
 * Resolves a configuration: YAML, then overrides, then defaults and checks.
 *
 * @example
 * ```ts
 * const cfg = resolveConfig({ text: "task: textcraft\n", name: "x.yaml" }, ["actor.lr=1e-5"]);
 * ```
 */
export function resolveConfig(
  src: ConfigSource,
  overrides: readonly string[] = [],
  o: { onNote?: (note: string) => void } = {},
): RunConfig {
  const raw = parseYaml(src);
  for (const given of overrides) {
    const t = translateOverride(given);
    if (t.note) o.onNote?.(t.note);
    for (const override of t.overrides) applyOverride(raw, override);
  }
  const r = RunConfig.safeParse(raw);
  if (!r.success) throw new TypeError(explain(r.error, src.name, overrides.length > 0));
  return r.data;
}

function explain(error: z.ZodError, name: string, overridden: boolean): string {
  const issue = error.issues[0];
  const where = overridden ? `${name} with overrides` : name;
  if (issue.code === "unrecognized_keys") {
    const at = issue.path.join(".");
    const valid = keysAt(issue.path.map(String));
    const keys = issue.keys.map((k) => (at ? `${at}.${k}` : k));
    const near = closest(issue.keys[0], valid);
    return `${where}: unknown config key${keys.length > 1 ? "s" : ""} ${keys.map((k) => `"${k}"`).join(", ")}` +
      (near ? `; did you mean "${at ? `${at}.` : ""}${near}"?` : "") +
      ` The keys of ${at || "the top level"} are: ${valid.join(", ")}.`;
  }
  const key = issue.path.join(".") || "(top level)";
  return `${where}: config key "${key}": ${issue.message}`;
}

/** The keys of the config section at `path` (the top level for []). */
export function keysAt(path: readonly string[]): string[] {
  // deno-lint-ignore no-explicit-any
  let node: any = RunConfig;
  for (const p of path) {
    while (node?.def?.innerType) node = node.def.innerType;
    node = node?.shape?.[p];
  }
  while (node?.def?.innerType) node = node.def.innerType;
  return Object.keys(node?.shape ?? {});
}

/** The candidate nearest `word` by edit distance, if it is near enough to be a likely typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const distance = (a: string, b: string) => {
    const d = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let prev = d[0];
      d[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const cur = d[j];
        d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
        prev = cur;
      }
    }
    return d[b.length];
  };
  let best: string | undefined, bestD = Infinity;
  for (const c of candidates) {
    const dd = distance(word, c);
    if (dd < bestD) [best, bestD] = [c, dd];
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function describe(v: unknown): string {
  return Array.isArray(v) ? "a list" : typeof v;
}
