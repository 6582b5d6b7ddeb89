/**
 * Plays a transcript of calls on one BFCL class instance and checks each result's text as BFCL's execution writes
 * it (`renderResult`, or `Error during execution: ...` for a raised ApiCallError). The expected texts in the tests
 * were produced by running gorilla's Python classes (commit 6ea57973) on the same calls.
 */
import assert from "node:assert/strict";
import { ApiCallError, type ApiClass } from "../../../tasks/bfcl/classes/api.ts";
import { renderError, renderResult } from "../../../tasks/bfcl/classes/py.ts";

/** One step: method, keyword arguments, the expected result text. */
export type Step = readonly [method: string, args: Record<string, unknown>, expected: string];

/** The text BFCL records for one call. */
export function runCall(api: ApiClass, method: string, args: Record<string, unknown>): string {
  try {
    return renderResult(api.call(method, args));
  } catch (e) {
    if (e instanceof ApiCallError) return renderError(e.message);
    throw e;
  }
}

/** Plays the steps in order; a mismatch names the step's index and call. */
export function playTranscript(api: ApiClass, steps: readonly Step[]): void {
  steps.forEach(([method, args, expected], i) => {
    const got = runCall(api, method, args);
    assert.equal(got, expected, `step ${i}: ${method}(${JSON.stringify(args)})`);
  });
}
