/**
 * What a BFCL episode's future depends on besides the conversation, as a digest: the server answers it with every
 * step (`info.state`), and the task's anchors read it (anchor.ts). It covers the user turn the episode is on and each
 * involved class's instance: its state as BFCL's checker compares it, and what it holds beyond that (the file system's
 * working directory). Objects are written with sorted keys, so equal states digest equally whatever order built them.
 * Left out: the calls made so far in the current user turn (which the checker's response check reads at the turn's
 * end) and the step count towards BFCL's 20-step limit, so that the turns of one state from different paths compare.
 */
import { createHash } from "node:crypto";
import type { Instances } from "./execute.ts";

/** JSON with every object's keys sorted. */
export function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/**
 * The digest (16 hex digits of SHA-256) of user turn `turn` and `instances`' states.
 *
 * @example
 * ```ts
 * stateKey(0, newInstances(entry, newInstance)); // 16 hex digits, equal for equal states
 * ```
 */
export function stateKey(turn: number, instances: Pick<Instances, "byClass">): string {
  const classes = Object.fromEntries(
    [...instances.byClass].map(([cls, inst]) => [cls, { state: inst.state(), position: inst.position?.() ?? {} }]),
  );
  return createHash("sha256").update(sortedJson({ turn, classes })).digest("hex").slice(0, 16);
}
