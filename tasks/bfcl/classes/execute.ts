/**
 * One call executed as BFCL's `execute_multi_turn_func_call` executes it, given the parsed call: the method found
 * among the entry's instances (each public method name maps to the LAST involved class that has it, as BFCL's
 * name mapping is built in `involved_classes` order), BFCL's refusal of a few names before evaluation, Python's
 * NameError for a name no instance has, and the result as text (`renderResult`) or `Error during execution: ...`.
 * Parsing the call text is the caller's job; nothing here evaluates code.
 */
import type { ApiClass } from "./api.ts";
import { ApiCallError, renderError, renderResult } from "./py.ts";

/** Names BFCL refuses before evaluating a call (its safety check on the function name). */
export const FORBIDDEN_NAMES: readonly string[] = ["kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"];

/** Method name -> instance, later instances overriding earlier ones (BFCL's `class_method_name_mapping`). */
export function methodOwners(instances: readonly ApiClass[]): Map<string, ApiClass> {
  const owners = new Map<string, ApiClass>();
  for (const api of instances) for (const m of api.methods()) owners.set(m, api);
  return owners;
}

/** A call's outcome: the text BFCL records, and whether it raised (the text starts "Error during execution:"). */
export interface CallOutcome {
  text: string;
  raised: boolean;
}

/**
 * Executes `name(*positional, **kwargs)` on the instance that owns `name`. Never throws for a call's own failure
 * (bad name, bad arguments, a Python exception): those become BFCL's error text. Other errors (bugs) propagate.
 */
export function executeCall(
  owners: ReadonlyMap<string, ApiClass>,
  name: string,
  kwargs: Record<string, unknown>,
  positional: readonly unknown[] = [],
): CallOutcome {
  const bare = name.includes(".") ? name.split(".")[1] : name;
  if (FORBIDDEN_NAMES.includes(bare)) {
    return { text: renderError(`Function call ${bare} is not allowed.`), raised: true };
  }
  const api = owners.get(name);
  if (!api) return { text: renderError(`name '${name}' is not defined`), raised: true };
  try {
    return { text: renderResult(api.call(name, kwargs, positional)), raised: false };
  } catch (e) {
    if (e instanceof ApiCallError) return { text: renderError(e.message), raised: true };
    throw e;
  }
}
