/** Small helpers shared by the commands: checked numeric flags and the standard error exit. */

/** Parses a number flag within [lo, hi] (integers only when `integer`); throws a RangeError naming the flag. */
export function numberFlag(flag: string, text: string | undefined, fallback: number, o: {
  lo?: number;
  hi?: number;
  integer?: boolean;
} = {}): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  const lo = o.lo ?? -Infinity, hi = o.hi ?? Infinity;
  if (text.trim() === "" || !Number.isFinite(n) || (o.integer && !Number.isInteger(n)) || n < lo || n > hi) {
    const kind = o.integer ? "an integer" : "a number";
    throw new RangeError(`${flag} must be ${kind} in [${lo}, ${hi}], got "${text}"`);
  }
  return n;
}

/**
 * Runs a command's main, printing an error's message (not its stack) and exiting with the error's own `exitCode`
 * (3: stopped with a checkpoint to resume from) or 2 on failure.
 */
export async function runMain(main: (args: string[]) => Promise<void>): Promise<void> {
  try {
    await main(Deno.args);
  } catch (e) {
    console.error(`error: ${humanMessage(e)}`);
    Deno.exit(exitCodeOf(e));
  }
}

/** The exit code of a failure: an error's numeric `exitCode` (RunStopped's 3, RunDiverged's 2), else 2. */
export function exitCodeOf(e: unknown): number {
  const code = (e as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === "number" && Number.isInteger(code) && code > 0 ? code : 2;
}

const OPS: Record<string, string> = {
  readfile: "read",
  open: "open",
  writefile: "write",
  mkdir: "create the folder",
  stat: "find",
  remove: "remove",
  rename: "rename",
  readdir: "list",
  copy: "copy",
  truncate: "truncate",
};

/**
 * An error's message for a user: an operating system error that no command explained ("No such file or directory
 * (os error 2): readfile 'x'") becomes a sentence naming the action and the path, with a hint where one is known.
 */
export function humanMessage(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const raw = /^(.+?) \(os error \d+\)(?:: (\w+) '(.*)')?(?:: (.*))?$/.exec(message);
  if (!raw) return message;
  const reason = raw[1].charAt(0).toLowerCase() + raw[1].slice(1);
  const hint = e instanceof Deno.errors.PermissionDenied
    ? " (check the permissions of the file or folder)"
    : e instanceof Deno.errors.AddrInUse
    ? " (another program holds the port: pick another one)"
    : "";
  if (raw[2] && raw[3] !== undefined) return `Cannot ${OPS[raw[2]] ?? raw[2]} ${raw[3]}: ${reason}${hint}`;
  return `${reason}${raw[4] ? `: ${raw[4]}` : ""}${hint}`;
}
