/**
 * Fault points: named moments of a run (an SFT step, a rollout, an update, the middle of a checkpoint's save) where
 * a test can have the process killed outright, as a power cut or `kill -9` would, by setting `CRUCIBLE_KILL_AT` to
 * the point's name. Nothing happens otherwise. The points: `sft step N` (after SFT step N is logged), `rl rollout N`
 * and `rl update N` (inside RL step N), and for a checkpoint NAME `written NAME` (files written, not yet in place),
 * `aside NAME` (an old copy moved aside), `saved NAME` (in place) and `pointed NAME` (latest names it).
 */

let target: string | undefined | null = null;

/** Kills this process with SIGKILL when `CRUCIBLE_KILL_AT` names this point. */
export function faultPoint(name: string): void {
  if (target === null) {
    try {
      target = Deno.env.get("CRUCIBLE_KILL_AT");
    } catch {
      target = undefined; // no permission to read the environment: no fault injection
    }
  }
  if (target === name) Deno.kill(Deno.pid, "SIGKILL");
}
