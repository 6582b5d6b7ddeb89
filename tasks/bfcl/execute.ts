/**
 * BFCL's execution of calls (`multi_turn_utils.execute_multi_turn_func_call`), the one executor of the task (the
 * server's episodes, the checker's replays, the generator and the API classes' tests all call it): one instance per
 * involved class, loaded from the entry's `initial_config` (stateless classes are not loaded), each public method name
 * mapped to the LAST involved class that has it (BFCL fills its name mapping in `involved_classes` order), BFCL's
 * refusal of a few names before evaluation, and each call's result turned into text: the return value if a string, a
 * dict through `json.dumps`, else `str()`, and a raised exception as `Error during execution: <message>`. Calls are
 * parsed data: a name that no involved class has answers with the NameError Python's `eval` would raise, and nothing
 * is run.
 *
 * @example
 * ```ts
 * const inst = newInstances(entry, newInstance);
 * executeCall(inst, { name: "cd", args: { folder: "docs" }, positional: [] }); // "{\"current_working_directory\": \"docs\"}"
 * ```
 */
import type { ParsedCall, PyValue } from "./literal.ts";
import { pyDeepCopy, PyFloat, renderResult } from "./classes/py.ts";

/** What the executor needs of an API class instance (the classes' `ApiClass` satisfies it). */
export interface ApiInstance {
  /** The class's BFCL name (GorillaFileSystem, TwitterAPI, ...). */
  readonly name: string;
  /** Loads an entry's initial state for the class. */
  loadScenario(config: Record<string, unknown>, longContext?: boolean): void;
  /** Calls a method by name; raises ApiCallError as the Python method raises. */
  call(method: string, args: Record<string, unknown>, positional?: readonly unknown[]): unknown;
  /** The class's public method names. */
  methods(): readonly string[];
  /** The instance's state, as BFCL's checker compares it. */
  state(): Record<string, unknown>;
  /**
   * What later calls depend on that `state()` leaves out, since BFCL's checker does not compare it (the file system's
   * working directory); absent where the class holds nothing more.
   */
  position?(): Record<string, unknown>;
}

/** Makes a fresh instance of a class by its BFCL name. */
export type ClassFactory = (className: string) => ApiInstance;

/** BFCL's stateless classes: never loaded from `initial_config`. */
export const STATELESS_CLASSES: ReadonlySet<string> = new Set(["MathAPI"]);

/** Names BFCL refuses before evaluating a call (its safety check on the function name). */
export const FORBIDDEN_NAMES: readonly string[] = ["kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"];

const FORBIDDEN = new Set(FORBIDDEN_NAMES);

/** One episode's instances: by class, and by the public method name that reaches them. */
export interface Instances {
  /** Each involved class's instance, by class name. */
  byClass: Map<string, ApiInstance>;
  /** The instance each public method name reaches. */
  byMethod: Map<string, ApiInstance>;
}

/** What an entry contributes to its instances. */
export interface Scenario {
  /** The classes the entry involves. */
  involvedClasses: readonly string[];
  /** Each class's initial state, by class name (BFCL's initial_config). */
  initialConfig: Readonly<Record<string, Record<string, unknown>>>;
  /** Whether the entry is a long-context one (its classes load larger states). */
  longContext: boolean;
}

/** Method name -> instance, later instances overriding earlier ones (BFCL's `class_method_name_mapping`). */
export function methodOwners<T extends Pick<ApiInstance, "methods">>(instances: Iterable<T>): Map<string, T> {
  const owners = new Map<string, T>();
  for (const inst of instances) for (const m of inst.methods()) owners.set(m, inst);
  return owners;
}

/** Fresh instances of the scenario's classes, each loaded from a deep copy of its part of `initial_config`. */
export function newInstances(scenario: Scenario, factory: ClassFactory): Instances {
  const byClass = new Map<string, ApiInstance>();
  for (const cls of scenario.involvedClasses) {
    const inst = factory(cls);
    if (!STATELESS_CLASSES.has(cls)) {
      inst.loadScenario(pyDeepCopy(scenario.initialConfig[cls] ?? {}), scenario.longContext);
    }
    byClass.set(cls, inst);
  }
  return { byClass, byMethod: methodOwners(byClass.values()) };
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

/**
 * Executes one call on `instances` (or on a bare method-name mapping from `methodOwners`) and returns BFCL's result
 * text; never throws for the call's own failure (bad name, bad arguments, a Python exception). Other errors (bugs)
 * propagate.
 */
export function executeCall(instances: Pick<Instances, "byMethod">, call: ParsedCall): string {
  const dotted = call.name.includes(".");
  const owner = dotted ? undefined : instances.byMethod.get(call.name);
  // BFCL checks the name before "(" after prefixing known methods with their instance: a bare name itself, a dotted
  // name's second part (`os.kill` -> kill; no class has a refused name as a method, so prefixing changes no verdict).
  const checked = dotted ? call.name.split(".")[1] : call.name;
  if (FORBIDDEN.has(checked)) return `${ERROR_PREFIX}Function call ${checked} is not allowed.`;
  // Python's eval of `a.b(...)` with `a` undefined names `a`.
  if (!owner) return `${ERROR_PREFIX}name '${call.name.split(".")[0]}' is not defined`;
  try {
    // Arguments are deep-copied: a class may keep what it is given, and a parsed call is replayed more than once.
    return renderResult(
      owner.call(call.name, copyValue(call.args) as ParsedCall["args"], call.positional.map(copyValue)),
    );
  } catch (e) {
    if (e instanceof Error && e.name === "ApiCallError") return `${ERROR_PREFIX}${e.message}`;
    throw e;
  }
}
