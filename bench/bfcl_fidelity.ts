/**
 * Crucible's BFCL server against upstream's Python classes, entry by entry: each turn's ground-truth calls are sent
 * to an episode as a model sends them (BFCL's prompting form, `[f(a=1), g('x')]`, then a text reply that ends the
 * turn), and every call's result text must equal, byte for byte, what gorilla's `execute_multi_turn_func_call`
 * returned for the same call string; after every turn each instance's public state must equal upstream's (Python's
 * `==`, what BFCL's state checker asks), and the episode must end passed. Upstream's side comes from
 * `bfcl_upstream.py` (Debian's python3 and python3-mpmath, gorilla's sources at a path the user gives).
 *
 * @example
 * ```ts
 * for await (const line of upstreamLines({ upstream: "gorilla/berkeley-function-call-leaderboard", dataDir })) {
 *   const r = compareEntry(byId.get(line.id)!, docs, line);
 *   r.mismatches.forEach((m) => console.log(m));
 * }
 * ```
 */
import { newInstance } from "../tasks/bfcl/classes/api.ts";
import { pyEqual } from "../tasks/bfcl/checker.ts";
import type { BfclEntry, FunctionDoc } from "../tasks/bfcl/entries.ts";
import { BfclEpisode } from "../tasks/bfcl/episode.ts";
import { PyFloat, toPlain } from "../tasks/bfcl/classes/py.ts";
import { methodOwners } from "../tasks/bfcl/execute.ts";
import { callText, parseCallList, type PyValue } from "../tasks/bfcl/literal.ts";

/** One entry as upstream played it: result texts by turn, and each instance's public state after each turn. */
export interface UpstreamLine {
  id: string;
  results: string[][];
  states: Record<string, Record<string, unknown>>[];
}

/** One difference between the engines, or a verdict that should have passed. */
export type Mismatch =
  | { id: string; kind: "result"; turn: number; call: string; crucible: string; upstream: string }
  | { id: string; kind: "state"; turn: number; className: string; attribute: string }
  | { id: string; kind: "count"; turn: number; crucible: number; upstream: number }
  | { id: string; kind: "verdict"; turn: number; reason: string };

/** What one entry gave. */
export interface EntryComparison {
  calls: number;
  callsEqual: number;
  turns: number;
  statesEqual: number;
  passed: boolean;
  mismatches: Mismatch[];
}

/** Plays `entry`'s ground truth through an episode and compares it with upstream's execution of the same calls. */
export function compareEntry(
  entry: BfclEntry,
  docs: Readonly<Record<string, readonly FunctionDoc[]>>,
  upstream: UpstreamLine,
): EntryComparison {
  const out: EntryComparison = { calls: 0, callsEqual: 0, turns: 0, statesEqual: 0, passed: false, mismatches: [] };
  const ep = new BfclEpisode(entry, docs, newInstance, { format: "python" });
  ep.reset();
  const id = entry.id;
  entry.groundTruth.forEach((turn, t) => {
    const want = upstream.results[t] ?? [];
    if (turn.length) {
      const got = ep.step(`[${turn.join(", ")}]`).info.calls;
      if (got.length !== want.length) {
        out.mismatches.push({ id, kind: "count", turn: t, crucible: got.length, upstream: want.length });
      }
      got.forEach((c, i) => {
        out.calls++;
        if (c.result === want[i]) out.callsEqual++;
        else out.mismatches.push({ id, kind: "result", turn: t, call: turn[i], crucible: c.result, upstream: want[i] });
      });
    }
    const end = ep.step("Done.");
    if (end.info.verdict && !end.info.verdict.valid) {
      out.mismatches.push({ id, kind: "verdict", turn: t, reason: end.info.verdict.reason ?? "" });
    }
    if (end.done) out.passed = end.info.passed === true;
    out.turns++;
    const states = ep.states();
    let same = true;
    for (const [className, theirs] of Object.entries(upstream.states[t] ?? {})) {
      const ours = toPlain(states[className] ?? {}) as Record<string, unknown>;
      for (const attribute of new Set([...Object.keys(theirs), ...Object.keys(ours)])) {
        if (!pyEqual(ours[attribute], theirs[attribute])) {
          same = false;
          out.mismatches.push({ id, kind: "state", turn: t, className, attribute });
        }
      }
    }
    if (same) out.statesEqual++;
  });
  return out;
}

/** Where upstream's sources and BFCL's data are, and which Python runs them. */
export interface UpstreamOptions {
  /** The folder holding gorilla's `bfcl_eval/` (its berkeley-function-call-leaderboard folder). */
  upstream: string;
  dataDir: string;
  python?: string;
  /** Only these entry ids (default: all). */
  ids?: readonly string[];
  /** A JSON-lines file of `{id, ground_truth}` to execute instead of BFCL's answers (the variants). */
  answers?: string;
}

/** Runs bfcl_upstream.py and yields its lines; a failed run throws with Python's error output. */
export async function* upstreamLines(options: UpstreamOptions): AsyncGenerator<UpstreamLine> {
  const script = new URL("./bfcl_upstream.py", import.meta.url).pathname;
  const args = [script, "--upstream", options.upstream, "--data-dir", options.dataDir];
  if (options.ids?.length) args.push("--ids", options.ids.join(","));
  if (options.answers) args.push("--answers", options.answers);
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(options.python ?? "python3", { args, stdout: "piped", stderr: "piped" }).spawn();
  } catch (e) {
    throw new Error(`Cannot run ${options.python ?? "python3"} (${(e as Error).message}); install Debian's python3`);
  }
  const errText = new Response(child.stderr).text();
  let buffer = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) yield JSON.parse(line) as UpstreamLine;
    }
  }
  const status = await child.status;
  if (!status.success) {
    throw new Error(
      `bfcl_upstream.py failed (exit ${status.code}) with --upstream ${options.upstream}: ${(await errText).trim()}\n` +
        "It needs gorilla's berkeley-function-call-leaderboard folder (holding bfcl_eval/) and python3-mpmath.",
    );
  }
}

/**
 * Rewrites of a ground-truth call that probe what the ground truth alone leaves untested: `floats` writes every int
 * argument as a float (`40` -> `40.0`, inside lists and dicts too), `ints` every integral float as an int (`2.0` ->
 * `2`), and `positional` passes keywords positionally in the order of Crucible's signature of the method (a wrong
 * order binds differently in Python, so upstream's results tell).
 */
export const VARIANTS = ["floats", "ints", "positional", "halves", "negated", "strings"] as const;
export type Variant = typeof VARIANTS[number];

function mapNumbers(v: PyValue, to: Exclude<Variant, "positional">): PyValue {
  if (Array.isArray(v)) return v.map((x) => mapNumbers(x, to));
  const n = v instanceof PyFloat ? v.value : typeof v === "number" ? v : undefined;
  if (n !== undefined) {
    if (to === "halves") return n + 0.5;
    if (to === "negated") return v instanceof PyFloat ? new PyFloat(-n) : -n;
    if (to === "strings") return v instanceof PyFloat ? `${n}.0` : String(n);
  }
  if (v instanceof PyFloat) return to === "ints" ? v.value : v;
  if (typeof v === "number") return to === "floats" && Number.isInteger(v) ? new PyFloat(v) : v;
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapNumbers(x, to)]));
  }
  return v;
}

/** One call string rewritten by `variant`; `params` gives a method's parameter names in signature order. */
export function variantCall(
  text: string,
  variant: Variant,
  params: (method: string) => readonly string[] | undefined,
): string {
  const call = parseCallList(text)[0];
  if (variant !== "positional") {
    return callText({
      name: call.name,
      positional: call.positional.map((v) => mapNumbers(v, variant)),
      args: Object.fromEntries(Object.entries(call.args).map(([k, v]) => [k, mapNumbers(v, variant)])),
    });
  }
  const names = params(call.name) ?? [];
  const positional = [...call.positional], args = { ...call.args };
  // Python binds positionals to the first parameters, so only a run of keywords that continues them can move.
  for (const name of names.slice(positional.length)) {
    if (!Object.hasOwn(args, name)) break;
    positional.push(args[name]);
    delete args[name];
  }
  return callText({ name: call.name, positional, args });
}

/** An entry whose ground truth is rewritten by `variant` (the same initial state and classes). */
export function variantEntry(entry: BfclEntry, variant: Variant): BfclEntry {
  const owners = methodOwners(entry.involvedClasses.map((c) => newInstance(c)));
  const params = (method: string) => owners.get(method)?.parameters(method);
  return { ...entry, groundTruth: entry.groundTruth.map((turn) => turn.map((c) => variantCall(c, variant, params))) };
}
