/**
 * The common frame of BFCL's API classes: a table of public methods with Python signatures, argument binding that
 * fails with CPython's own TypeError texts (missing, unexpected and duplicated arguments, too many positional ones),
 * and `ApiCallError`, the exception a method raises (BFCL records it as `Error during execution: <message>`).
 */
import { ApiCallError, pyTypeName } from "./py.ts";

export { ApiCallError };

/** One parameter: a name, and a default when the parameter is optional. */
export type Param = string | readonly [name: string, defaultValue: unknown];

/** One public method: its parameters in order (Python's, self excluded) and its body over bound arguments. */
export interface MethodSpec {
  readonly params: readonly Param[];
  readonly run: (a: Record<string, unknown>) => unknown;
}

function paramName(p: Param): string {
  return typeof p === "string" ? p : p[0];
}

/** "'a'", "'a' and 'b'", "'a', 'b', and 'c'" as CPython lists missing arguments. */
function nameList(names: string[]): string {
  const q = names.map((n) => `'${n}'`);
  if (q.length === 1) return q[0];
  if (q.length === 2) return `${q[0]} and ${q[1]}`;
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`;
}

/**
 * Python's binding of `f(*positional, **kwargs)` for a method of `owner`, or its TypeError text. Checks in CPython's
 * order: too many positional, then each keyword (unknown, or given twice), then missing required ones.
 */
export function bindArgs(
  owner: string,
  method: string,
  params: readonly Param[],
  kwargs: Record<string, unknown>,
  positional: readonly unknown[] = [],
): Record<string, unknown> {
  const fn = `${owner}.${method}()`;
  const names = params.map(paramName);
  const required = params.filter((p) => typeof p === "string").length;
  if (positional.length > params.length) {
    const takes = required === params.length
      ? `takes ${params.length + 1} positional argument${params.length === 0 ? "" : "s"}`
      : `takes from ${required + 1} to ${params.length + 1} positional arguments`;
    const given = positional.length + 1;
    throw new ApiCallError(`${fn} ${takes} but ${given} ${given === 1 ? "was" : "were"} given`, "TypeError");
  }
  const bound: Record<string, unknown> = {};
  positional.forEach((v, i) => bound[names[i]] = v);
  for (const [k, v] of Object.entries(kwargs)) {
    if (!names.includes(k)) throw new ApiCallError(`${fn} got an unexpected keyword argument '${k}'`, "TypeError");
    if (k in bound) throw new ApiCallError(`${fn} got multiple values for argument '${k}'`, "TypeError");
    bound[k] = v;
  }
  const missing = params.filter((p) => typeof p === "string" && !(p in bound)) as string[];
  if (missing.length > 0) {
    const s = missing.length === 1 ? "argument" : "arguments";
    throw new ApiCallError(
      `${fn} missing ${missing.length} required positional ${s}: ${nameList(missing)}`,
      "TypeError",
    );
  }
  for (const p of params) if (typeof p !== "string" && !(p[0] in bound)) bound[p[0]] = p[1];
  return bound;
}

/** A string argument, or the AttributeError Python raises when a str method is called on another type. */
export function expectStr(v: unknown, attr: string): string {
  if (typeof v === "string") return v;
  throw new ApiCallError(`'${pyTypeName(v)}' object has no attribute '${attr}'`, "AttributeError");
}

/** The shared machinery of every class: dispatch through the method table with Python's binding. */
export abstract class PyApiBase {
  abstract readonly name: string;
  protected abstract readonly table: Readonly<Record<string, MethodSpec>>;

  /** Calls a public method; throws `ApiCallError` as the Python method would raise. */
  call(method: string, args: Record<string, unknown>, positional: readonly unknown[] = []): unknown {
    const spec = Object.hasOwn(this.table, method) ? this.table[method] : undefined;
    if (!spec) throw new ApiCallError(`'${this.name}' object has no attribute '${method}'`, "AttributeError");
    const bound = bindArgs(this.name, method, spec.params, args, positional);
    try {
      return spec.run(bound);
    } catch (e) {
      // A JS error here means an argument of a type the method does not handle as Python would (Python raises its
      // own TypeError / AttributeError there); it becomes an error result rather than crashing the episode.
      if (e instanceof ApiCallError || !(e instanceof TypeError || e instanceof RangeError)) throw e;
      throw new ApiCallError(`${method}: argument of an unsupported type (${e.message})`, "TypeError");
    }
  }

  /** Public method names, sorted as Python's `inspect.getmembers` lists them. */
  methods(): readonly string[] {
    return Object.keys(this.table).sort();
  }

  /** A method's parameter names in order (for binding positional arguments), or undefined if there is none. */
  parameters(method: string): readonly string[] | undefined {
    return Object.hasOwn(this.table, method) ? this.table[method].params.map(paramName) : undefined;
  }
}
