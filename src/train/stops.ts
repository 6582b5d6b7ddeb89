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

/** Whether an error is the operating system's "no space left on device" (ENOSPC, os error 28). */
export function isDiskFull(e: unknown): boolean {
  return e instanceof Error && /os error 28\b|No space left on device/i.test(e.message);
}

/**
 * The stop of a run whose disk filled up: `RunStopped` (exit 3) when `checkpoint` (a complete one: saves are atomic)
 * can be resumed from, else an error that still says where and what to do; `e` itself when it is no disk-full error.
 */
export function diskFullStop(e: unknown, runDir: string, checkpoint: string | undefined): unknown {
  if (!isDiskFull(e)) return e;
  // The OS error's own text without "(os error 28)", which would make the command line reword the whole message.
  const what = `The disk holding ${runDir} is full (${(e as Error).message.replace(/ \(os error \d+\)/, "")}).`;
  if (!checkpoint) return new Error(`${what} No checkpoint was saved yet; free some space and start the run again.`);
  return new RunStopped(
    `${what} The latest checkpoint (${checkpoint}) is complete; free some space (df -h ${runDir}) and resume with: ` +
      `deno task train --resume ${runDir}`,
  );
}
