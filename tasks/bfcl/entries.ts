/**
 * BFCL's multi-turn entries as its files write them, read from a data directory laid out as `bfcl_eval/data/` is:
 * `BFCL_v3_multi_turn_<category>.json` or `BFCL_v4_...` (one JSON object per line: `id`, `question` as turns of
 * messages, `initial_config`, `involved_classes`, optional `path` and `missed_function`), `possible_answer/` beside
 * them with the same names (`id`, `ground_truth`: one list of Python-style call strings per turn), and
 * `multi_turn_func_doc/` with the classes' tool documents. Entries come in category order (base, miss_func,
 * miss_param, long_context), file order within. Every malformed input stops with one message naming the file, the
 * entry id and the field.
 *
 * @example
 * ```ts
 * const entries = await loadBfclDir("/data/bfcl_eval/data");
 * entries[0].id;           // "multi_turn_base_0"
 * entries[0].groundTruth;  // [["cd(folder='document')", ...], ...]
 * ```
 */

import { DOC_FILES, type FunctionDoc } from "./classes/docs.ts";
import { parsePyJson } from "./classes/py.ts";

/** One chat message of a user turn. */
export interface Message {
  role: string;
  content: string;
}

/** A tool's document as BFCL's `multi_turn_func_doc` files write it. */
export type { FunctionDoc };

/** One multi-turn entry with its ground truth. */
export interface BfclEntry {
  id: string;
  /** BFCL's category: the id without its trailing `_<n>`, less the `multi_turn_` prefix (`base`, `miss_func`, ...). */
  category: string;
  question: Message[][];
  initialConfig: Record<string, Record<string, unknown>>;
  involvedClasses: string[];
  /** Turn index (as a string, as BFCL writes it) -> names of the functions held out until that turn. */
  missedFunction: Record<string, string[]>;
  /** Per turn, the ground-truth calls as Python call strings. */
  groundTruth: string[][];
  /** Whether the classes load their long-context extension (BFCL: the category names `long_context`). */
  longContext: boolean;
}

/** BFCL's four multi-turn categories, in the order entries are served. */
export const BFCL_CATEGORIES = ["base", "miss_func", "miss_param", "long_context"] as const;

/** A data directory's entries and the tool documents of every class it names. */
export interface BfclData {
  entries: BfclEntry[];
  docs: Record<string, FunctionDoc[]>;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Reads a JSON-lines file as Python's `json.loads` reads it (`10000.0` stays a float: the classes hand such values
 * back, and Python prints them with their `.0`); a bad line stops with the file and line.
 */
export function parseJsonLines(text: string, file: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = parsePyJson(line);
    } catch (e) {
      throw new SyntaxError(
        `${file}, line ${i + 1}: not JSON (${(e as Error).message}); BFCL files hold one object a line`,
      );
    }
    if (!isObject(v)) throw new SyntaxError(`${file}, line ${i + 1}: expected a JSON object, got ${JSON.stringify(v)}`);
    out.push(v);
  });
  return out;
}

/**
 * Checks one question line and its answer line and builds the entry; `bad` names the file, the id and the field.
 * Exported for the generator, which builds its entries through the same checks.
 */
export function toEntry(q: Record<string, unknown>, a: Record<string, unknown>, files: [string, string]): BfclEntry {
  const id = typeof q.id === "string" ? q.id : undefined;
  const bad = (file: string, field: string, want: string): never => {
    throw new SyntaxError(`${file}: entry ${id ?? "(no id)"}, field "${field}": ${want}`);
  };
  if (id === undefined) bad(files[0], "id", "must be a string such as multi_turn_base_0");
  const turns = q.question;
  if (
    !Array.isArray(turns) ||
    !turns.every((t) =>
      Array.isArray(t) && t.every((m) => isObject(m) && typeof m.role === "string" && typeof m.content === "string")
    )
  ) bad(files[0], "question", "must be a list of turns, each a list of {role, content} messages");
  const config = q.initial_config ?? {};
  if (!isObject(config) || !Object.values(config).every(isObject)) {
    bad(files[0], "initial_config", "must be an object of class name -> state object");
  }
  const classes = q.involved_classes;
  if (!Array.isArray(classes) || !classes.every((c) => typeof c === "string")) {
    bad(files[0], "involved_classes", "must be a list of class names such as GorillaFileSystem");
  }
  const missed = q.missed_function ?? {};
  if (
    !isObject(missed) || !Object.values(missed).every((v) => Array.isArray(v) && v.every((n) => typeof n === "string"))
  ) {
    bad(files[0], "missed_function", "must be an object of turn index -> list of function names");
  }
  if (a.id !== id) bad(files[1], "id", `must match the question file's id ${id} on the same line, got ${a.id}`);
  const gt = a.ground_truth;
  if (!Array.isArray(gt) || !gt.every((t) => Array.isArray(t) && t.every((c) => typeof c === "string"))) {
    bad(files[1], "ground_truth", "must be a list of turns, each a list of Python call strings");
  }
  const qTurns = turns as Message[][], gTurns = gt as string[][];
  if (gTurns.length !== qTurns.length) {
    bad(files[1], "ground_truth", `has ${gTurns.length} turns but the question has ${qTurns.length}`);
  }
  for (const turn of Object.keys(missed as object)) {
    const t = Number(turn);
    if (!Number.isInteger(t) || t < 0 || t >= qTurns.length) {
      bad(files[0], "missed_function", `names turn "${turn}", outside the ${qTurns.length} turns`);
    }
  }
  const category = id!.replace(/_\d+$/, "").replace(/^multi_turn_/, "");
  return {
    id: id!,
    category,
    question: qTurns,
    initialConfig: config as BfclEntry["initialConfig"],
    involvedClasses: classes as string[],
    missedFunction: missed as Record<string, string[]>,
    groundTruth: gTurns,
    longContext: category.includes("long_context") || category.includes("composite"),
  };
}

async function readText(path: string, what: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new Error(`Cannot read ${what} ${path}: ${(e as Error).message}`);
  }
}

/**
 * Loads every multi-turn category present in `dir` (v4 names preferred over v3 where both exist); throws naming the
 * directory and the expected file names when none is, and naming file, id and field for a malformed entry.
 */
export async function loadBfclDir(dir: string): Promise<BfclData> {
  const entries: BfclEntry[] = [];
  for (const category of BFCL_CATEGORIES) {
    for (const version of ["v4", "v3"]) {
      const name = `BFCL_${version}_multi_turn_${category}.json`;
      const qFile = `${dir}/${name}`, aFile = `${dir}/possible_answer/${name}`;
      const qText = await readText(qFile, "the question file");
      if (qText === undefined) continue;
      const aText = await readText(aFile, "the answer file");
      if (aText === undefined) {
        throw new Error(`${qFile} has no answers beside it: expected ${aFile} (BFCL's possible_answer/ folder)`);
      }
      const qs = parseJsonLines(qText, qFile), as = parseJsonLines(aText, aFile);
      if (qs.length !== as.length) {
        throw new SyntaxError(`${aFile} holds ${as.length} answers for the ${qs.length} entries of ${qFile}`);
      }
      qs.forEach((q, i) => entries.push(toEntry(q, as[i], [qFile, aFile])));
      break;
    }
  }
  if (entries.length === 0) {
    throw new Error(
      `No BFCL multi-turn files in ${dir}: expected BFCL_v4_multi_turn_base.json (or v3, or another of the categories ` +
        `${BFCL_CATEGORIES.join(", ")}) with possible_answer/ beside it, as in gorilla's berkeley-function-call-` +
        `leaderboard/bfcl_eval/data/`,
    );
  }
  const docs: Record<string, FunctionDoc[]> = {};
  for (const cls of new Set(entries.flatMap((e) => e.involvedClasses))) {
    const file = DOC_FILES[cls];
    const entry = entries.find((e) => e.involvedClasses.includes(cls))!;
    if (!file) {
      throw new SyntaxError(
        `Entry ${entry.id}, field "involved_classes": unknown class ${cls}; expected one of ` +
          Object.keys(DOC_FILES).join(", "),
      );
    }
    const path = `${dir}/multi_turn_func_doc/${file}`;
    const text = await readText(path, "the tool documents");
    if (text === undefined) throw new Error(`Missing ${path}: the tool documents of ${cls} (needed by ${entry.id})`);
    docs[cls] = parseJsonLines(text, path).map((d, i) => {
      if (typeof d.name !== "string" || !isObject(d.parameters) || !isObject(d.parameters.properties)) {
        throw new SyntaxError(`${path}, line ${i + 1}: a tool document needs "name" and "parameters.properties"`);
      }
      return d as unknown as FunctionDoc;
    });
  }
  return { entries, docs };
}
