/**
 * The few CPython behaviours that TextCraft's observation strings expose: `str.strip`, `repr` of a string, and
 * `int`/`str` conversions with their 4300-digit limit (CPython 3.10.7 and later; the upstream image runs 3.10).
 * Counts are bigints so that `get 99999999999999999999 dirt` prints what Python prints.
 */
import { GameError } from "../../../src/env/server/game.ts";

/** An exception the upstream handler does not catch as a game failure: its text becomes `{"error": text}`. */
export class PythonError extends GameError {
  override name = "PythonError";
}

// Python's str.isspace set; JS's \s differs (it lacks \x1c-\x1f and \x85, and has \ufeff).
const PY_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006" +
  "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";

/** `s.strip()` with Python's whitespace set. */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && PY_SPACE.includes(s[a])) a++;
  while (b > a && PY_SPACE.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

const MAX_STR_DIGITS = 4300;

/** `int(digits)` for a string of ASCII digits, with CPython's limit on the number of digits. */
export function pyInt(digits: string): bigint {
  if (digits.length > MAX_STR_DIGITS) {
    throw new PythonError(
      `Exceeds the limit (${MAX_STR_DIGITS}) for integer string conversion: value has ${digits.length} digits; ` +
        "use sys.set_int_max_str_digits() to increase the limit",
    );
  }
  return BigInt(digits);
}

/** `str(n)` for an int, with CPython's limit on the number of digits. */
export function pyStr(n: bigint): string {
  const s = n.toString();
  if (s.length - (n < 0n ? 1 : 0) > MAX_STR_DIGITS) {
    throw new PythonError(
      `Exceeds the limit (${MAX_STR_DIGITS}) for integer string conversion; ` +
        "use sys.set_int_max_str_digits() to increase the limit",
    );
  }
  return s;
}

// Characters str.isprintable() rejects: everything in Other and Separator except the ASCII space.
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** `repr(s)` for a str: quote choice, escapes of backslash, quote, control and non-printable characters. */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch !== " " && NON_PRINTABLE.test(ch)) {
      if (cp < 0x100) out += "\\x" + hex(cp, 2);
      else if (cp < 0x10000) out += "\\u" + hex(cp, 4);
      else out += "\\U" + hex(cp, 8);
    } else out += ch;
  }
  return out + quote;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, "0");
}

/** `"minecraft:" + name.replace(" ", "_")`: how TextCraft turns a typed name into an id. */
export function nameToId(name: string): string {
  return "minecraft:" + name.replaceAll(" ", "_");
}

/** `id.replace("minecraft:", "").replace("_", " ")`: how TextCraft shows an id. */
export function idToName(id: string): string {
  return id.replaceAll("minecraft:", "").replaceAll("_", " ");
}
