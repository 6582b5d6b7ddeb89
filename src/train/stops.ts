/**
 * How a run stops when it cannot go on, and what the exit code says: `RunStopped` (exit 3) when a good checkpoint
 * was saved and `--resume` continues from it (the environment stayed down or kept failing, the failure budget ran
 * out); `RunDiverged` (exit 2) when the policy collapsed and nothing of it was kept. The command line reads
 * `exitCode` off the error, so the train layer never exits the process itself.
 */

/** A stop with a checkpoint to resume from: exit code 3, the message ends with the resume command. */
export class RunStopped extends Error {
  override name = "RunStopped";
  readonly exitCode = 3;
}

/** A diverged run: exit code 2; nothing after the last good checkpoint was saved, and no `final`. */
export class RunDiverged extends RangeError {
  override name = "RunDiverged";
  readonly exitCode = 2;
}

/** The environment failed too much of a phase's work (an evaluation) to go on; the phase saves and stops. */
export class EnvFailed extends Error {
  override name = "EnvFailed";
}
