/**
 * BFCL's execution of calls (`multi_turn_utils.execute_multi_turn_func_call`): one instance per involved class,
 * loaded from the entry's `initial_config` (stateless classes are not loaded), each public method name mapped to the
 * instance that owns it, and each call's result turned into text: the return value if a string, a dict through
 * `json.dumps`, else `str()`, and a raised exception as `Error during execution: <message>`. Calls are parsed data:
 * a name that no involved class has answers with the NameError Python's `eval` would raise, and nothing is run.
 *
 * @example
 * ```ts
 * const inst = newInstances(entry, newInstance);
 * executeCall(inst, { name: "cd", args: { folder: "docs" }, positional: [] }); // "{\"current_working_directory\": \"docs\"}"
 * ```
 */
import type { ParsedCall, PyValue } from "./literal.ts";
import { FORBIDDEN_NAMES } from "./classes/execute.ts";
import { PyFloat, renderResult } from "./classes/py.ts";

/** What the executor needs of an API class instance (the classes' `ApiClass` satisfies it). */
export interface ApiInstance {
  readonly name: string;
  loadScenario(config: Record<string, unknown>, longContext?: boolean): void;
  call(method: string, args: Record<string, unknown>, positional?: readonly unknown[]): unknown;
  methods(): readonly string[];
  state(): Record<string, unknown>;
}

/** Makes a fresh instance of a class by its BFCL name. */
export type ClassFactory = (className: string) => ApiInstance;

/** BFCL's stateless classes: never loaded from `initial_config`. */
export const STATELESS_CLASSES: ReadonlySet<string> = new Set(["MathAPI"]);

const FORBIDDEN = new Set(FORBIDDEN_NAMES);

/** One episode's instances: by class, and by the public method name that reaches them. */
export interface Instances {
  byClass: Map<string, ApiInstance>;
  byMethod: Map<string, ApiInstance>;
}

/** What an entry contributes to its instances. */
export interface Scenario {
  involvedClasses: readonly string[];
  initialConfig: Readonly<Record<string, Record<string, unknown>>>;
  longContext: boolean;
}

/** Fresh instances of the scenario's classes, each loaded from a deep copy of its part of `initial_config`. */
export function newInstances(scenario: Scenario, factory: ClassFactory): Instances {
  const byClass = new Map<string, ApiInstance>(), byMethod = new Map<string, ApiInstance>();
  for (const cls of scenario.involvedClasses) {
    const inst = factory(cls);
    if (!STATELESS_CLASSES.has(cls)) {
      inst.loadScenario(structuredClone(scenario.initialConfig[cls] ?? {}), scenario.longContext);
    }
    byClass.set(cls, inst);
    // Later classes win a shared method name, as BFCL's mapping is filled class by class.
    for (const m of inst.methods()) byMethod.set(m, inst);
  }
  return { byClass, byMethod };
}

/** A deep copy of a parsed value that keeps PyFloat (structuredClone would turn it into a plain object). */
function copyValue(v: PyValue): PyValue {
  if (Array.isArray(v)) return v.map(copyValue);
  if (v !== null && typeof v === "object" && !(v instanceof PyFloat)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyValue(x)]));
  }
  return v;
}

/** Prefix of every failed call's result. */
export const ERROR_PREFIX = "Error during execution: ";

/** Executes one call on `instances` and returns BFCL's result text; never throws for the call's own failure. */
export function executeCall(instances: Instances, call: ParsedCall): string {
  const head = call.name.split(".")[0];
  const method = call.name.includes(".") ? undefined : call.name;
  const owner = method === undefined ? undefined : instances.byMethod.get(method);
  const checked = owner ? call.name : head;
  if (FORBIDDEN.has(checked)) return `${ERROR_PREFIX}Function call ${checked} is not allowed.`;
  if (!owner || method === undefined) return `${ERROR_PREFIX}name '${head}' is not defined`;
  try {
    // Arguments are deep-copied: a class may keep what it is given, and a parsed call is replayed more than once.
    return renderResult(owner.call(method, copyValue(call.args) as ParsedCall["args"], call.positional.map(copyValue)));
  } catch (e) {
    if (e instanceof Error && e.name === "ApiCallError") return `${ERROR_PREFIX}${e.message}`;
    throw e;
  }
}
