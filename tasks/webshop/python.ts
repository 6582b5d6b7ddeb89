/**
 * The few Python text rules WebShop's output depends on, beyond those BFCL's classes already reproduce (float repr,
 * string repr, `json.dumps`, `.2f` ties, code-point ordering: tasks/bfcl/classes/py.ts, re-exported here): `str.strip()`
 * with Python's whitespace, BeautifulSoup's whitespace-only text nodes, thefuzz 0.19's `full_process`, `str(tuple)`
 * of an option pair, and Flask's `tojson` filter. Hand-written: each is a line or two of Python's own rules.
 */
import { compareStr, floatRepr, formatFixed, jsonDumps, strRepr } from "../bfcl/classes/py.ts";

export { compareStr, floatRepr, formatFixed, jsonDumps, strRepr };

/** Python's whitespace for `str.strip()` / `str.isspace()` (JS `trim` differs: it strips U+FEFF, keeps \x1c-\x1f). */
const PY_SPACE = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, "gu");

/** Python's `s.strip()`. */
export function pyStrip(s: string): string {
  return s.replace(STRIP, "");
}

/**
 * A text node as BeautifulSoup (4.11, html.parser) keeps it: a node of ASCII whitespace only (space, \t, \n, \f, \r)
 * becomes "\n" when it holds a newline, else " ", unless it sits inside `<pre>` or `<textarea>`.
 */
export function bs4Text(raw: string, inPre = false): string {
  if (inPre || !/^[ \t\n\f\r]+$/.test(raw)) return raw;
  return raw.includes("\n") ? "\n" : " ";
}

/**
 * thefuzz 0.19's `utils.full_process(s, force_ascii=True)`: code points 128-255 deleted (its `asciidammit`; higher
 * ones stay), every character outside Python's Unicode `\w` (letters, digits, numbers, `_`) made a space, lower-cased,
 * stripped. fuzzball's own processing differs (it drops all non-ASCII, and turns `_` into a space), so strings are
 * processed here and handed to fuzzball unprocessed.
 */
export function fullProcess(s: string): string {
  const ascii = s.replace(/[\u0080-\u00ff]/g, "");
  return pyStrip(ascii.replace(/[^\p{L}\p{N}_]/gu, " ").toLowerCase());
}

/** Python's `str((a, b))` for a pair of strings: `('color', 'black')`. */
export function pairRepr(a: string, b: string): string {
  return `(${strRepr(a)}, ${strRepr(b)})`;
}

/**
 * Flask 2.1's `tojson` filter on a dict of strings: `json.dumps` with sorted keys and ASCII escapes, then `<`, `>`,
 * `&` and `'` written as `\u003c`, `\u003e`, `\u0026`, `\u0027`.
 */
export function flaskToJson(dict: ReadonlyMap<string, string>): string {
  const sorted = new Map([...dict].sort(([a], [b]) => compareStr(a, b)));
  return jsonDumps(sorted).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")
    .replace(/'/g, "\\u0027");
}

/** Python's `str(d)` of a dict of strings: `{'color': 'black'}`. */
export function dictRepr(dict: ReadonlyMap<string, string>): string {
  return `{${[...dict].map(([k, v]) => `${strRepr(k)}: ${strRepr(v)}`).join(", ")}}`;
}
