/**
 * A parser for the Python the BFCL calls are written in: a list of calls `[f(a=1), g(b='x', c=[1.5, None])]` whose
 * arguments are literals (strings, ints, floats, True/False/None, lists, tuples, dicts; a bare name reads as its
 * text, as BFCL's AST decoder reads it). Nothing is ever evaluated: an expression that is not a literal (arithmetic,
 * a nested call, a comprehension) is a SyntaxError naming the offset. With `json: true` it also reads JSON's
 * `true`/`false`/`null`, so one parser reads JSON arguments and keeps `1.0` a float. Hand-written: Python's own `ast`
 * is not reachable from Deno, and a literal subset is small enough to read exactly. Tuples read as lists.
 *
 * @example
 * ```ts
 * parseCallList("[cd(folder='docs'), mv(source='a.txt', destination='b')]");
 * // [{ name: "cd", args: { folder: "docs" }, positional: [] }, { name: "mv", ... }]
 * ```
 */
import { type PyFloat, pyFloat, pyRepr } from "./classes/py.ts";

/**
 * A parsed literal in the classes' value model (classes/py.ts): ints and non-integral floats as numbers, integral
 * floats as PyFloat, dicts as plain objects with string keys. Tuples read as lists (BFCL's calls never pass one).
 */
export type PyValue = string | number | boolean | null | PyFloat | PyValue[] | { [key: string]: PyValue };

/** One call as written: its dotted name, keyword arguments in order, and any positional ones. */
export interface ParsedCall {
  /** The dotted name called, e.g. `ls` or `TwitterAPI.post_tweet`. */
  name: string;
  /** Keyword arguments in the order written. */
  args: Record<string, PyValue>;
  /** Positional arguments, in order. */
  positional: PyValue[];
}

/** BFCL's text of a call, `name(a=repr(a), b=repr(b))`, positional arguments first. */
export function callText(call: ParsedCall): string {
  const parts = call.positional.map(pyRepr).concat(Object.entries(call.args).map(([k, v]) => `${k}=${pyRepr(v)}`));
  return `${call.name}(${parts.join(", ")})`;
}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "0": "\0",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  "\n": "",
};

class Reader {
  pos = 0;
  constructor(readonly src: string, readonly json: boolean) {}

  fail(what: string): never {
    const near = this.src.slice(this.pos, this.pos + 20);
    throw new SyntaxError(`${what} at offset ${this.pos}${near ? ` (near "${near}")` : " (at the end)"}`);
  }
  skip(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos])) this.pos++;
  }
  peek(): string {
    this.skip();
    return this.src[this.pos] ?? "";
  }
  eat(ch: string): boolean {
    if (this.peek() !== ch) return false;
    this.pos++;
    return true;
  }
  expect(ch: string): void {
    if (!this.eat(ch)) this.fail(`Expected "${ch}"`);
  }
  name(): string | undefined {
    this.skip();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.src.slice(this.pos));
    if (!m) return undefined;
    this.pos += m[0].length;
    return m[0];
  }

  /** A comma-separated sequence up to `close`, trailing comma allowed; returns whether a comma was seen. */
  seq(close: string, item: () => void): boolean {
    let comma = false;
    while (!this.eat(close)) {
      item();
      if (this.eat(",")) comma = true;
      else if (this.peek() !== close) this.fail(`Expected "," or "${close}"`);
    }
    return comma;
  }

  value(): PyValue {
    const c = this.peek();
    if (c === "'" || c === '"') return this.string();
    if (c === "[") {
      this.pos++;
      const items: PyValue[] = [];
      this.seq("]", () => items.push(this.value()));
      return items;
    }
    if (c === "(") {
      this.pos++;
      const items: PyValue[] = [];
      const comma = this.seq(")", () => items.push(this.value()));
      return items.length === 1 && !comma ? items[0] : items;
    }
    if (c === "{") {
      this.pos++;
      const dict: Record<string, PyValue> = {};
      this.seq("}", () => {
        const k = this.value();
        this.expect(":");
        dict[typeof k === "string" ? k : pyRepr(k)] = this.value();
      });
      return dict;
    }
    if (/[-+0-9.]/.test(c)) return this.number();
    const start = this.pos;
    const word = this.name();
    if (word === undefined) this.fail("Expected a literal value");
    const constants: Record<string, PyValue> = this.json
      ? { true: true, false: false, null: null, True: true, False: false, None: null }
      : { True: true, False: false, None: null };
    if (Object.hasOwn(constants, word)) return constants[word];
    if (this.peek() === "(" || this.peek() === ".") {
      this.pos = start;
      this.fail("A nested call or attribute is not a literal and is never evaluated");
    }
    if (this.json) {
      this.pos = start;
      this.fail(`Unknown name "${word}" in JSON`);
    }
    return word;
  }

  number(): number | PyFloat {
    this.skip();
    const m = /^([-+]\s*)?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?/.exec(this.src.slice(this.pos));
    const text = m?.[0] ?? "";
    if (!m || !/\d/.test(text)) this.fail("Expected a number");
    this.pos += text.length;
    if (/^[A-Za-z_]/.test(this.src[this.pos] ?? "")) this.fail("Malformed number");
    const clean = text.replace(/[\s_]/g, "");
    const isFloat = m[3] !== undefined || m[4] !== undefined;
    return isFloat ? pyFloat(Number(clean)) : Number(clean);
  }

  string(): string {
    this.skip();
    const q = this.src[this.pos];
    const triple = !this.json && this.src.startsWith(q.repeat(3), this.pos);
    const end = triple ? q.repeat(3) : q;
    this.pos += end.length;
    let out = "";
    for (;;) {
      if (this.pos >= this.src.length) this.fail("Unterminated string");
      if (this.src.startsWith(end, this.pos)) {
        this.pos += end.length;
        return out;
      }
      const ch = this.src[this.pos++];
      if (ch === "\n" && !triple) this.fail("Line break inside a string");
      if (ch !== "\\") {
        out += ch;
        continue;
      }
      const e = this.src[this.pos++] ?? "";
      if (Object.hasOwn(ESCAPES, e)) out += ESCAPES[e];
      else if (e === "x" || e === "u" || e === "U") {
        const n = e === "x" ? 2 : e === "u" ? 4 : 8;
        const h = this.src.slice(this.pos, this.pos + n);
        if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(h)) this.fail(`Bad \\${e} escape`);
        out += String.fromCodePoint(parseInt(h, 16));
        this.pos += n;
      } else if (e === "/" && this.json) out += "/";
      else out += `\\${e}`; // Python keeps an unknown escape as written
    }
  }

  call(): ParsedCall {
    let name = this.name();
    if (name === undefined) this.fail("Expected a function name");
    while (this.peek() === ".") {
      this.pos++;
      const part = this.name();
      if (part === undefined) this.fail('Expected a name after "."');
      name += `.${part}`;
    }
    this.expect("(");
    const call: ParsedCall = { name, args: {}, positional: [] };
    this.seq(")", () => {
      const save = this.pos;
      const key = this.name();
      if (key !== undefined && this.peek() === "=" && this.src[this.pos + 1] !== "=") {
        this.pos++;
        if (Object.hasOwn(call.args, key)) this.fail(`Keyword argument "${key}" repeated`);
        call.args[key] = this.value();
      } else {
        this.pos = save;
        if (Object.keys(call.args).length > 0) this.fail("Positional argument after a keyword argument");
        call.positional.push(this.value());
      }
    });
    return call;
  }

  end(): void {
    if (this.peek() !== "") this.fail("Unexpected text after the end");
  }
}

/** Parses one call or a bracketed list of calls (an empty list is no call); throws SyntaxError naming the offset. */
export function parseCallList(text: string): ParsedCall[] {
  const r: Reader = new Reader(text, false);
  const calls: ParsedCall[] = [];
  if (r.eat("[")) r.seq("]", () => calls.push(r.call()));
  else calls.push(r.call());
  r.end();
  return calls;
}

/** Parses one literal value (`json: true` also reads true/false/null and keeps `1.0` a float). */
export function parseLiteral(text: string, options: { json?: boolean } = {}): PyValue {
  const r: Reader = new Reader(text, options.json ?? false);
  const v = r.value();
  r.end();
  return v;
}

/**
 * Parses `name key=value key=value` (values are literals, JSON's true/false/null allowed; pairs separated by spaces
 * or commas): the tiny model's one-line call form.
 */
export function parseKeywordCall(text: string): ParsedCall {
  const r: Reader = new Reader(text, true);
  const name = r.name();
  if (name === undefined) r.fail("Expected a function name");
  const call: ParsedCall = { name, args: {}, positional: [] };
  while (r.peek() !== "") {
    r.eat(",");
    const key = r.name();
    if (key === undefined) r.fail("Expected key=value");
    r.expect("=");
    if (Object.hasOwn(call.args, key)) r.fail(`Keyword argument "${key}" repeated`);
    call.args[key] = r.value();
  }
  return call;
}
