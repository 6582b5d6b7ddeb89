/**
 * Python values as BFCL's calls and results write them. A parsed argument keeps what JSON would lose (a float
 * written `1.0` stays a float, a tuple stays a tuple), so that a call prints back as Python's `repr` prints it and a
 * result reads as BFCL's `json.dumps`/`str` would write it. Hand-written: no npm library reproduces CPython's float
 * repr, string repr and `json.dumps(ensure_ascii=True)` byte for byte.
 *
 * @example
 * ```ts
 * pyRepr({ a: [1, new PyFloat(2), "it's"] }); // "{'a': [1, 2.0, \"it's\"]}"
 * pyJsonDumps({ b: true, c: null });          // '{"b": true, "c": null}'
 * ```
 */

/** A Python float, kept apart from an int of the same value (`2.0` is not `2`). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python tuple. */
export class PyTuple {
  constructor(readonly items: readonly PyValue[]) {}
}

/** A Python literal value: ints are JS numbers with integer values, dicts plain objects with string keys. */
export type PyValue =
  | string
  | number
  | boolean
  | null
  | PyFloat
  | PyTuple
  | PyValue[]
  | { [key: string]: PyValue };

/** CPython's `repr(float)`: the shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16, else `1e+16` style. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mant, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  const sign = mant.startsWith("-") ? "-" : "";
  const digits = mant.replace("-", "").replace(".", "");
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp).toString().padStart(2, "0");
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${e}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}.${frac || "0"}`;
}

function hex(c: number, width: number): string {
  return c.toString(16).padStart(width, "0");
}

/** CPython's `repr(str)`: single quotes unless the text holds `'` and no `"`; control characters escaped. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\x${hex(c, 2)}`;
    else out += ch;
  }
  return out + quote;
}

/** CPython's `repr` of a literal value. A JS number with a fraction prints as a float. */
export function pyRepr(v: unknown): string {
  if (typeof v === "string") return strRepr(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v === 0 ? 0 : v) : floatRepr(v);
  if (typeof v === "boolean") return v ? "True" : "False";
  if (v === null || v === undefined) return "None";
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (v instanceof PyTuple) {
    return `(${v.items.map(pyRepr).join(", ")}${v.items.length === 1 ? "," : ""})`;
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (typeof v === "object") {
    return `{${Object.entries(v).map(([k, x]) => `${strRepr(k)}: ${pyRepr(x)}`).join(", ")}}`;
  }
  return String(v);
}

/** CPython's `str`: a string as itself, anything else as its repr. */
export function pyStr(v: unknown): string {
  return typeof v === "string" ? v : pyRepr(v);
}

function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i], c = s.charCodeAt(i);
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c > 0x7e) out += `\\u${hex(c, 4)}`;
    else out += ch;
  }
  return out + '"';
}

/** CPython's `json.dumps(v)` with its default separators `", "` and `": "` and `ensure_ascii`. */
export function pyJsonDumps(v: unknown): string {
  if (typeof v === "string") return jsonString(v);
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN";
    if (!Number.isFinite(v)) return v > 0 ? "Infinity" : "-Infinity";
    return Number.isInteger(v) ? String(v === 0 ? 0 : v) : floatRepr(v);
  }
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v === null || v === undefined) return "null";
  if (v instanceof PyFloat) return Number.isFinite(v.value) ? floatRepr(v.value) : pyJsonDumps(v.value);
  if (v instanceof PyTuple) return pyJsonDumps([...v.items]);
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(", ")}]`;
  if (typeof v === "object") {
    return `{${Object.entries(v).map(([k, x]) => `${jsonString(k)}: ${pyJsonDumps(x)}`).join(", ")}}`;
  }
  return jsonString(String(v));
}

/** BFCL's result string of a call's return value: a string as is, a dict through `json.dumps`, else `str()`. */
export function resultText(v: unknown): string {
  if (typeof v === "string") return v;
  const dict = typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof PyFloat) &&
    !(v instanceof PyTuple);
  return dict ? pyJsonDumps(v) : pyStr(v);
}

/** The plain JS value an API class receives: floats as numbers, tuples as arrays. */
export function toJs(v: PyValue): unknown {
  if (v instanceof PyFloat) return v.value;
  if (v instanceof PyTuple) return v.items.map(toJs);
  if (Array.isArray(v)) return v.map(toJs);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJs(x)]));
  }
  return v;
}
