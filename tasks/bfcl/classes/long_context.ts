/**
 * BFCL's long-context extension data (file text, filler file names, long lists of stocks, transactions, cities,
 * cards, bookings, car metadata), loaded once from `tasks/bfcl/data/long_context.json`, a JSON copy of
 * gorilla's `long_context.py` (Apache-2.0; the source is named in the file's `_source` key). Parsed with
 * `parsePyJson` so floats such as 7287.0 stay floats; `{"__python__": "Ellipsis"}` becomes `PyEllipsis`.
 */
import text from "../data/long_context.json" with { type: "text" };
import { parsePyJson, PyEllipsis } from "./py.ts";

function revive(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(revive);
  if (typeof v === "object" && v !== null && v.constructor === Object) {
    const o = v as Record<string, unknown>;
    if (o.__python__ === "Ellipsis") return PyEllipsis.value;
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, revive(x)]));
  }
  return v;
}

let cache: Record<string, unknown> | undefined;

/** One constant of long_context.py by name; a fresh deep copy each call, as the classes may extend or mutate it. */
export function longContext(name: string): unknown {
  cache ??= revive(parsePyJson(text)) as Record<string, unknown>;
  if (!(name in cache)) throw new RangeError(`long_context.py has no constant ${name}`);
  return revive(cache[name]);
}
