/**
 * What identifies the state an agent acts from (GiGPO's anchor state, src/rl/gigpo.ts): the rollout asks the task
 * before each turn, from what the client has seen of the episode, and keeps the answer with the turn
 * (TurnRecord.anchor). Within one prompt group, turns with equal anchors acted from one state. A task says what its
 * state is with its `anchor` hook; without one, the observation the agent acts on is the state. Anchors are kept as
 * digests, so an anchor costs 16 characters in the rollout log however long the page it stands for.
 */
import { createHash } from "node:crypto";

/** What the client has seen of an episode when a turn begins. */
export interface SeenSoFar {
  /** The environment's first observation. */
  firstObservation: string;
  /** The turns played so far: the action each sent (null where the task answered locally) and what came back. */
  turns: readonly { readonly action: string | null; readonly observation: string }[];
  /** The observation the agent acts on now: the first observation, or the last turn's. */
  observation: string;
  /**
   * What the server said with that observation beyond AgentGym's fields, where it said something: its reset's
   * `info` for the first, else its last step's (Crucible's BFCL server: the state its classes hold).
   */
  info?: Readonly<Record<string, unknown>>;
}

/**
 * The anchor of the state a turn acts from: a 64-bit digest (hex) of the task's key for it (`Task.anchor`), or of the
 * observation where the task has no hook. `task` is a Task (src/task/task.ts), or anything with its `anchor` hook.
 *
 * @example
 * ```ts
 * // A task without the hook: the observation is the state (SHA-256 of "Page 1", its first 16 hex digits).
 * stateAnchor({}, { firstObservation: "Page 1", turns: [], observation: "Page 1" }); // "e8b8355262d0af49"
 * ```
 */
export function stateAnchor(task: { anchor?(seen: SeenSoFar): string }, seen: SeenSoFar): string {
  const key = task.anchor ? task.anchor(seen) : seen.observation;
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}
