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

/** Runs a command's main, printing an error's message (not its stack) and exiting 2 on failure. */
export async function runMain(main: (args: string[]) => Promise<void>): Promise<void> {
  try {
    await main(Deno.args);
  } catch (e) {
    console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
    Deno.exit(2);
  }
}
