/**
 * Request validation shaped like FastAPI's: a body or query that does not fit the route's model is answered 422
 * with `{"detail": [{type, loc, msg, input}]}`, pydantic v2's wording. Integers are bigints parsed from the JSON
 * source text, so ids and indices of any size behave as Python's ints do.
 */

/** One pydantic error entry. */
export interface Problem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

/** A field of a route's model: `int` or `str`, required, or optional with a default (null allowed then). */
export interface Field {
  type: "int" | "str";
  required: boolean;
  default?: bigint | string | null;
}

/** The outcome of validation: the values, or the problems that make a 422. */
export type Checked = { ok: true; values: Record<string, unknown> } | { ok: false; problems: Problem[] };

/** Parses JSON keeping integer literals exact as bigints. Throws SyntaxError on malformed text. */
export function parseJson(text: string): unknown {
  return JSON.parse(text, (_key, value, context?: { source?: string }) => {
    const src = context?.source;
    return typeof value === "number" && src !== undefined && /^-?\d+$/.test(src) ? BigInt(src) : value;
  });
}

// V8 has JSON.rawJSON (TC39 "JSON.parse source text access"); TypeScript's lib does not declare it yet.
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** JSON text of a value that may hold bigints (written as plain integers). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? rawJson(v.toString()) : v));
}

/** Checks a parsed body (or `undefined` when none was sent) against a model. */
export function checkBody(body: unknown, fields: Record<string, Field>): Checked {
  if (body === undefined) return fail([{ type: "missing", loc: ["body"], msg: "Field required", input: null }]);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    const msg = "Input should be a valid dictionary or object to extract fields from";
    return fail([{ type: "model_attributes_type", loc: ["body"], msg, input: body }]);
  }
  return checkFields(body as Record<string, unknown>, fields, "body");
}

/** Checks URL query parameters against a model. */
export function checkQuery(params: URLSearchParams, fields: Record<string, Field>): Checked {
  const obj: Record<string, unknown> = {};
  for (const name of Object.keys(fields)) if (params.has(name)) obj[name] = params.get(name);
  return checkFields(obj, fields, "query");
}

function checkFields(obj: Record<string, unknown>, fields: Record<string, Field>, where: string): Checked {
  const values: Record<string, unknown> = {};
  const problems: Problem[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const loc = [where, name];
    if (!Object.hasOwn(obj, name)) {
      if (field.required) {
        problems.push({ type: "missing", loc, msg: "Field required", input: where === "body" ? obj : null });
      } else values[name] = field.default;
      continue;
    }
    const raw = obj[name];
    if (raw === null && !field.required) {
      values[name] = null;
      continue;
    }
    const v = field.type === "int" ? toInt(raw) : typeof raw === "string" ? raw : undefined;
    if (v === undefined) problems.push(problemFor(field.type, raw, loc));
    else values[name] = v;
  }
  return problems.length > 0 ? fail(problems) : { ok: true, values };
}

// Pydantic's lax int: integers, integral floats, booleans and strings of digits.
function toInt(raw: unknown): bigint | undefined {
  if (typeof raw === "bigint") return raw;
  if (typeof raw === "boolean") return raw ? 1n : 0n;
  if (typeof raw === "number") return Number.isInteger(raw) ? BigInt(raw) : undefined;
  if (typeof raw === "string" && /^\s*[+-]?\d+\s*$/.test(raw)) return BigInt(raw.trim());
  return undefined;
}

function problemFor(type: "int" | "str", raw: unknown, loc: (string | number)[]): Problem {
  if (type === "str") return { type: "string_type", loc, msg: "Input should be a valid string", input: raw };
  if (typeof raw === "number") {
    const msg = "Input should be a valid integer, got a number with a fractional part";
    return { type: "int_from_float", loc, msg, input: raw };
  }
  if (typeof raw === "string") {
    const msg = "Input should be a valid integer, unable to parse string as an integer";
    return { type: "int_parsing", loc, msg, input: raw };
  }
  return { type: "int_type", loc, msg: "Input should be a valid integer", input: raw };
}

function fail(problems: Problem[]): Checked {
  return { ok: false, problems };
}
