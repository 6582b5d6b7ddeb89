/**
 * What identifies a BFCL state, for GiGPO's step groups (Task.anchor): the observation after the previous call (the
 * call results, or the next user turn's request), and the state the server says the step left (`info.state`,
 * state_key.ts: the user turn, every class's state and the file system's working directory). The client cannot see
 * the classes' state itself, and the observation alone would join an `ls` answered before a `rm` with the same `ls`
 * after it; Crucible's server says it with every step. A server that does not (none but Crucible's serves BFCL) gives
 * the observation alone. The first turn acts on the entry's initial state, the same in every episode of its prompt.
 *
 * @example
 * ```ts
 * bfclAnchor({ firstObservation: "...", turns: [], observation: '{"current_working_directory": "/docs"}',
 *   info: { state: "5be0e3c61b0a9d24" } }); // '{"current_working_directory": "/docs"}\nstate 5be0e3c61b0a9d24'
 * ```
 */
import type { SeenSoFar } from "../../src/task/anchor.ts";

/** BFCL's anchor: the observation, and the server's digest of the state where it gave one. */
export function bfclAnchor(seen: SeenSoFar): string {
  const state = seen.info?.state;
  return typeof state === "string" ? `${seen.observation}\nstate ${state}` : seen.observation;
}
