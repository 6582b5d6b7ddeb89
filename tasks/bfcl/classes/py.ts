/**
 * Python values as BFCL's API classes produce them, and their text as BFCL's execution writes it.
 *
 * Value model: a JS number that is not an integer is a Python float; an integral JS number is a Python int; a
 * `PyFloat` is a Python float whose value is integral (5.0), the one case a JS number cannot tell apart. Strings,
 * booleans, null (None), arrays (lists) and plain objects / Maps (dicts, in insertion order) carry over as they are.
 *
 * BFCL's `execute_multi_turn_func_call` turns each result into text: a str as it is, a dict through `json.dumps`
 * (", " and ": " separators, ASCII escapes), anything else through `str()` (Python's repr of lists, True/False/None,
 * floats as 5.0). `renderResult` reproduces that; `pyRepr` and `jsonDumps` are its two halves. `parsePyJson` reads
 * JSON keeping `1.0` a float, for entries whose numbers the classes hand back unchanged.
 */

/** A Python exception raised by an API method; `message` is Python's `str(e)`, `pythonType` its class name. */
export class ApiCallError extends Error {
  /** An exception whose str() is `message`, of Python class `pythonType`. */
  constructor(message: string, readonly pythonType = "Exception") {
    super(message);
    this.name = "ApiCallError";
  }
}

/** Python's `int(x)` for an int, float (truncated), bool or integer string, else its ValueError / TypeError. */
export function pyInt(v: unknown): number {
  if (typeof v === "string") {
    if (/^\s*[+-]?\d+\s*$/.test(v)) return Number(v);
    throw new ApiCallError(`invalid literal for int() with base 10: ${strRepr(v)}`, "ValueError");
  }
  const x = typeof v === "boolean" ? Number(v) : numValue(v);
  if (x === undefined) {
    throw new ApiCallError(
      `int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(v)}'`,
      "TypeError",
    );
  }
  return Math.trunc(x);
}

/** Python's `float(x)` for a number, bool or numeric string, else its ValueError / TypeError. */
export function pyFloatOf(v: unknown): number {
  if (typeof v === "string") {
    const t = v.trim().toLowerCase();
    if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
    if (/^[+-]?nan$/.test(t)) return NaN;
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return Number(t);
    throw new ApiCallError(`could not convert string to float: ${strRepr(v)}`, "ValueError");
  }
  const x = typeof v === "boolean" ? Number(v) : numValue(v);
  if (x === undefined) {
    throw new ApiCallError(`float() argument must be a string or a real number, not '${pyTypeName(v)}'`, "TypeError");
  }
  return x;
}

/** A Python float with an integral value (5.0); other floats are plain non-integer numbers. */
export class PyFloat {
  /** The float `value` (integral), rendered with its `.0`. */
  constructor(readonly value: number) {}
}

/** Python's `Ellipsis` (`...`), which one of BFCL's long-context lists holds; `json.dumps` cannot write it. */
export class PyEllipsis {
  static readonly value = new PyEllipsis();
  private constructor() {}
}

/**
 * A Python object with no JSON form, known by its repr (`Decimal('4')`, `mpf('2.0')`, a complex): `json.dumps`
 * fails on it, so BFCL writes a dict holding one through `str()`.
 */
export class PyOpaque {
  constructor(readonly repr: string) {}
}

/** A number as Python float: integral values are wrapped so they print as `5.0`. */
export function pyFloat(x: number): number | PyFloat {
  return Number.isInteger(x) || x === 0 ? new PyFloat(x) : x;
}

/** The JS number of a Python int or float (`PyFloat` unwrapped); undefined for anything else (bool included). */
export function numValue(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

/** Whether a value is a Python float (a non-integral number or a `PyFloat`). */
export function isPyFloat(v: unknown): boolean {
  return v instanceof PyFloat || (typeof v === "number" && !Number.isInteger(v));
}

/** Python's `type(v).__name__` for the value model above. */
export function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "string") return "str";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "bigint") return "int";
  if (v instanceof PyFloat) return "float";
  if (Array.isArray(v)) return "list";
  if (v instanceof Set) return "set";
  if (v instanceof PyOpaque) return v.repr.split("(")[0];
  return "dict";
}

/**
 * JSON text parsed with Python's number types kept: a number written with `.`, `e` or `E` becomes a float (a
 * `PyFloat` when its value is integral), as `json.loads` does.
 */
export function parsePyJson(text: string): unknown {
  // deno-lint-ignore no-explicit-any
  const reviver = function (this: unknown, _key: string, value: unknown, context?: any): unknown {
    if (typeof value === "number" && Number.isInteger(value) && context && typeof context.source === "string") {
      if (/[.eE]/.test(context.source)) return new PyFloat(value);
    }
    return value;
  };
  // deno-lint-ignore no-explicit-any
  return JSON.parse(text, reviver as any);
}

/** Python's `repr(float)`: shortest round-trip digits, scientific below 1e-4 and from 1e16. */
export function floatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mant, expText] = x.toExponential().split("e");
  const exp = Number(expText);
  const neg = mant.startsWith("-");
  const digits = mant.replace("-", "").replace(".", "");
  let body: string;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
      const frac = digits.slice(exp + 1);
      body = `${int}.${frac === "" ? "0" : frac}`;
    } else {
      body = `0.${"0".repeat(-exp - 1)}${digits}`;
    }
  } else {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const sign = exp < 0 ? "-" : "+";
    body = `${m}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return neg ? `-${body}` : body;
}

/** Python's `str.isprintable()` for one code point. */
function isPrintable(ch: string): boolean {
  if (ch === " ") return true;
  return !/[\p{C}\p{Z}]/u.test(ch);
}

/** Python's `repr(str)`: single quotes unless the text holds `'` and no `"`. */
export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (cp < 0x20 || cp === 0x7f) out += "\\x" + cp.toString(16).padStart(2, "0");
    else if (cp < 0x7f || isPrintable(ch)) out += ch;
    else if (cp <= 0xff) out += "\\x" + cp.toString(16).padStart(2, "0");
    else if (cp <= 0xffff) out += "\\u" + cp.toString(16).padStart(4, "0");
    else out += "\\U" + cp.toString(16).padStart(8, "0");
  }
  return out + quote;
}

/** A dict's entries in insertion order, from a Map or a plain object. */
function entries(v: object): [unknown, unknown][] {
  return v instanceof Map ? [...v.entries()] : Object.entries(v);
}

/** Python's `repr()` of a value in the model above (the text `str()` gives for lists, dicts and scalars). */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return strRepr(v);
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : floatRepr(v);
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (v instanceof PyEllipsis) return "Ellipsis";
  if (v instanceof PyOpaque) return v.repr;
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (v instanceof Set) return v.size === 0 ? "set()" : `{${[...v].map(pyRepr).join(", ")}}`;
  if (typeof v === "object") {
    return `{${entries(v).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(", ")}}`;
  }
  throw new TypeError(`pyRepr: no Python form for a ${typeof v}`);
}

/** Python's `str()`: a string as it is, everything else as its repr. */
export function pyStr(v: unknown): string {
  return typeof v === "string" ? v : pyRepr(v);
}

/** `json.dumps` string escaping with `ensure_ascii=True`. */
function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i];
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (c < 0x20 || c > 0x7e) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += ch;
  }
  return out + '"';
}

/** A dict key as `json.dumps` writes it (str, int, float, bool and None keys become strings). */
function jsonKey(k: unknown): string {
  if (typeof k === "string") return jsonString(k);
  if (k === null || k === undefined) return '"null"';
  if (typeof k === "boolean") return `"${k}"`;
  return `"${jsonNumber(k)}"`;
}

function jsonNumber(v: unknown): string {
  const x = numValue(v)!;
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  return isPyFloat(v) ? floatRepr(x) : String(x);
}

/** Python's `json.dumps(v)` with its default separators (", ", ": ") and `ensure_ascii=True`. */
export function jsonDumps(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (v === true) return "true";
  if (v === false) return "false";
  if (typeof v === "string") return jsonString(v);
  if (typeof v === "number" || v instanceof PyFloat) return jsonNumber(v);
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return `[${v.map(jsonDumps).join(", ")}]`;
  if (isDict(v)) return `{${entries(v).map(([k, x]) => `${jsonKey(k)}: ${jsonDumps(x)}`).join(", ")}}`;
  const type = v instanceof PyEllipsis ? "ellipsis" : v instanceof PyOpaque ? v.repr.split("(")[0] : typeof v;
  throw new TypeError(`Object of type ${type} is not JSON serializable`);
}

/** Whether a value is a dict in the model above (a Map or a plain object, not a list or a PyFloat). */
export function isDict(v: unknown): v is object {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof PyFloat) &&
    !(v instanceof PyEllipsis) && !(v instanceof PyOpaque) && !(v instanceof Set);
}

/**
 * A method's return value as BFCL's execution records it: a str unchanged, a dict as `json.dumps`, anything else
 * as `str()`. `renderResult({ result: pyFloat(5) })` is `{"result": 5.0}`; `renderResult(null)` is `None`.
 */
export function renderResult(v: unknown): string {
  if (typeof v === "string") return v;
  if (isDict(v)) {
    try {
      return jsonDumps(v);
    } catch {
      return pyStr(v);
    }
  }
  return pyStr(v);
}

/** The text BFCL records for a call that raised: `Error during execution: <message>`. */
export function renderError(message: string): string {
  return `Error during execution: ${message}`;
}

/** A plain JSON value of a Python value: floats unwrapped, Maps as objects (for state comparison: 1 == 1.0). */
export function toPlain(v: unknown): unknown {
  if (v instanceof PyFloat) return v.value;
  if (v instanceof PyEllipsis) return { __python__: "Ellipsis" };
  if (v instanceof PyOpaque) return { __python__: v.repr };
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [String(k), toPlain(x)]));
  if (v instanceof Set) {
    return [...v].map(toPlain).sort((a, b) => String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);
  }
  if (isDict(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toPlain(x)]));
  return v === undefined ? null : v;
}

/** Python's `str.splitlines()` (no keepends): \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029. */
export function splitlines(s: string): string[] {
  // deno-lint-ignore no-control-regex
  const lines = s.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Python's `str.split()` with no separator: runs of whitespace, no empty pieces. */
export function splitWhitespace(s: string): string[] {
  // deno-lint-ignore no-control-regex
  return s.split(/[\s\x1c-\x1f\x85]+/u).filter((w) => w !== "");
}

/** Python's ordering of two strings (by code point, not UTF-16 unit). */
export function compareStr(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Python's `len(str)` (code points). */
export function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The exact value of a finite double as m * 2^e with integer m. */
function dyadic(x: number): [bigint, number] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const expBits = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (expBits !== 0) mant |= 1n << 52n;
  const e = (expBits === 0 ? 1 : expBits) - 1075;
  return [x < 0 ? -mant : mant, e];
}

/**
 * Python's `f"{x:.{d}f}"` and `round(x, d)` share one rule: the exact binary value rounded half to even. JS
 * `toFixed` rounds exact ties up, so ties are found exactly (x * 10^d has a fractional part of one half) and sent
 * to the even neighbour.
 */
function roundedScaled(x: number, d: number): bigint | undefined {
  const [m, e] = dyadic(Math.abs(x));
  if (e >= 0) return undefined;
  const den = 1n << BigInt(-e);
  const num = m * 10n ** BigInt(d);
  const q = num / den;
  const r = num % den;
  if (r * 2n !== den) return undefined;
  return q % 2n === 0n ? q : q + 1n;
}

/** Python's `f"{x:.{d}f}"` for a finite float. */
export function formatFixed(x: number, d: number): string {
  const tie = roundedScaled(x, d);
  if (tie === undefined) {
    const s = x.toFixed(d);
    return s;
  }
  const digits = tie.toString().padStart(d + 1, "0");
  const body = d === 0 ? digits : `${digits.slice(0, -d)}.${digits.slice(-d)}`;
  return (x < 0 || Object.is(x, -0)) ? `-${body}` : body;
}

/** Python's `round(x, d)` for a float with d >= 0: the nearest double to the correctly rounded decimal. */
export function pyRound(x: number, d: number): number {
  if (!Number.isFinite(x)) return x;
  return Number(formatFixed(x, d));
}

/** A deep copy that keeps `PyFloat`, `PyOpaque`, `PyEllipsis` and Maps (structuredClone drops class identity). */
export function pyDeepCopy<T>(v: T): T {
  if (Array.isArray(v)) return v.map(pyDeepCopy) as T;
  if (v instanceof Map) return new Map([...v.entries()].map(([k, x]) => [k, pyDeepCopy(x)])) as T;
  if (v instanceof Set) return new Set(v) as T;
  if (isDict(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, pyDeepCopy(x)])) as T;
  return v;
}

/** A dict key as Python hashes it: 1, 1.0 and True are one key; strings stay strings. */
export function pyKey(v: unknown): unknown {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "bigint" && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Number(v);
  }
  return v;
}

/** Python's `==` for the value model: numbers by value (1 == 1.0 == True), lists and dicts deeply. */
export function pyEq(a: unknown, b: unknown): boolean {
  const x = typeof a === "boolean" ? Number(a) : numValue(a);
  const y = typeof b === "boolean" ? Number(b) : numValue(b);
  if (x !== undefined || y !== undefined) return x === y;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((e, i) => pyEq(e, b[i]));
  }
  if (isDict(a) && isDict(b)) {
    const ea = entries(a);
    const eb = entries(b);
    if (ea.length !== eb.length) return false;
    return ea.every(([k, va]) => {
      const hit = eb.find(([kb]) => pyEq(pyKey(k), pyKey(kb)));
      return hit !== undefined && pyEq(va, hit[1]);
    });
  }
  return a === b;
}

/** A dict's keys in order, from a Map or a plain object (for classes that accept either). */
export function dictEntries(v: object): [unknown, unknown][] {
  return entries(v);
}

/** Python truthiness: 0, 0.0, "", None, False and empty containers are false. */
export function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map || v instanceof Set) return v.size > 0;
  if (v instanceof PyFloat) return v.value !== 0;
  if (typeof v === "bigint") return v !== 0n;
  if (isDict(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

/** A Python int or float argument (bool counts, as in Python), or undefined. */
export function num(v: unknown): number | bigint | undefined {
  if (typeof v === "number" || typeof v === "bigint") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v instanceof PyFloat) return v.value;
  return undefined;
}

export function isNumber(v: unknown): boolean {
  return num(v) !== undefined;
}

/** Python's repr of a complex: `(1.5+2j)`, floats without a trailing `.0`, the real part left out when it is +0. */
export function complexRepr(re: number, im: number): string {
  const part = (x: number) => floatRepr(x).replace(/\.0$/, "").replace(/\.0e/, "e");
  const imText = `${part(im)}j`;
  if (re === 0 && !Object.is(re, -0)) return imText;
  return `(${part(re)}${im < 0 || Object.is(im, -0) ? "" : "+"}${imText})`;
}

/** An int result: a number when it is safe, a bigint past 2^53. */
export function intResult(x: bigint): number | bigint {
  return x >= BigInt(Number.MIN_SAFE_INTEGER) && x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x;
}

/** Python's a op b for ints and floats (bools count as ints); undefined when an operand is no number. */
export function arith(a: unknown, b: unknown, op: "+" | "-" | "*"): unknown {
  const x = num(a);
  const y = num(b);
  if (x === undefined || y === undefined) return undefined;
  if (!isPyFloat(a) && !isPyFloat(b)) {
    const p = BigInt(x);
    const q = BigInt(y);
    return intResult(op === "+" ? p + q : op === "-" ? p - q : p * q);
  }
  const p = Number(x);
  const q = Number(y);
  return pyFloat(op === "+" ? p + q : op === "-" ? p - q : p * q);
}

/** Python's `a op b` on numbers, raising Python's TypeError text when an operand is no number. */
export function pyArith(a: unknown, b: unknown, op: "+" | "-" | "*", shown: string = op): unknown {
  const r = arith(a, b, op);
  const isSeq = (v: unknown) => typeof v === "string" || Array.isArray(v);
  if (r === undefined && op === "+" && isSeq(a)) {
    const kind = typeof a === "string" ? "str" : "list";
    if (pyTypeName(b) === kind) {
      return typeof a === "string" ? a + (b as string) : [...(a as unknown[]), ...(b as unknown[])];
    }
    throw new ApiCallError(`can only concatenate ${kind} (not "${pyTypeName(b)}") to ${kind}`, "TypeError");
  }
  if (r === undefined && op === "*" && (isSeq(a) || isSeq(b))) {
    const [seq, n] = isSeq(a) ? [a, b] : [b, a];
    const count = typeof n === "boolean" ? Number(n) : typeof n === "number" && Number.isInteger(n) ? n : undefined;
    if (count === undefined) {
      throw new ApiCallError(`can't multiply sequence by non-int of type '${pyTypeName(n)}'`, "TypeError");
    }
    if (typeof seq === "string") return seq.repeat(Math.max(0, count));
    return Array.from({ length: Math.max(0, count) }, () => seq as unknown[]).flat();
  }
  if (r === undefined) {
    throw new ApiCallError(
      `unsupported operand type(s) for ${shown}: '${pyTypeName(a)}' and '${pyTypeName(b)}'`,
      "TypeError",
    );
  }
  return r;
}

/** Python's numeric comparison `a op b`, raising Python's TypeError text when either side is no number. */
export function pyCompare(a: unknown, op: "<" | "<=" | ">" | ">=", b: unknown): boolean {
  const x = num(a);
  const y = num(b);
  if (x === undefined || y === undefined) {
    throw new ApiCallError(
      `'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`,
      "TypeError",
    );
  }
  const p = Number(x);
  const q = Number(y);
  return op === "<" ? p < q : op === "<=" ? p <= q : op === ">" ? p > q : p >= q;
}

/** A dict key for `key in d` / `d[key]`: Python's TypeError for unhashable values (lists, dicts, sets). */
export function hashKey(v: unknown): unknown {
  if (Array.isArray(v) || isDict(v) || v instanceof Set) {
    throw new ApiCallError(`unhashable type: '${pyTypeName(v)}'`, "TypeError");
  }
  return pyKey(v);
}

/** Python's `item in container` for str (substring), list (==), dict / Map / Set (key); TypeError otherwise. */
export function pyContains(container: unknown, item: unknown): boolean {
  if (typeof container === "string") {
    if (typeof item !== "string") {
      throw new ApiCallError(`'in <string>' requires string as left operand, not ${pyTypeName(item)}`, "TypeError");
    }
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((x) => pyEq(x, item));
  if (container instanceof Map || container instanceof Set) return container.has(hashKey(item));
  if (isDict(container)) {
    const k = hashKey(item);
    return Object.keys(container).some((x) => x === k);
  }
  throw new ApiCallError(`argument of type '${pyTypeName(container)}' is not iterable`, "TypeError");
}

/** Python's `s.lower()`, or its AttributeError when s is not a str. */
export function pyLower(v: unknown): string {
  if (typeof v !== "string") {
    throw new ApiCallError(`'${pyTypeName(v)}' object has no attribute 'lower'`, "AttributeError");
  }
  return v.toLowerCase();
}

/** Python's `d[key]` on a record: the value, or KeyError with the key's repr. */
export function getItem(d: Record<string, unknown>, key: string): unknown {
  if (!isDict(d)) throw new ApiCallError(`'${pyTypeName(d)}' object is not subscriptable`, "TypeError");
  if (!Object.hasOwn(d, key)) throw new ApiCallError(strRepr(key), "KeyError");
  return d[key];
}

/** Python's iteration of a value (`for x in v`, `list.extend(v)`): its items, or the TypeError. */
export function pyIter(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return [...v];
  if (v instanceof Map || v instanceof Set) return [...v.keys()];
  if (isDict(v)) return Object.keys(v);
  throw new ApiCallError(`'${pyTypeName(v)}' object is not iterable`, "TypeError");
}
