/**
 * Small helpers shared by the commands (src/cli) and the benchmarks (bench/): flag parsing whose errors name the
 * fix (node:util's parseArgs underneath, its raw messages rewritten: an unknown flag gets the nearest known one, as
 * config keys do), checked numeric flags and the standard error exit.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { closest } from "../config/load.ts";

/** The flags of a parseArgs config, as written on a command line (`--name`, and `-x` for a short form). */
function flagNames(options: ParseArgsConfig["options"]): string[] {
  return Object.entries(options ?? {}).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
}

/**
 * parseArgs for the command `command` (as in "deno task eval"), strict, with messages that name the fix: an
 * unknown flag gets "did you mean" and the list of flags; a flag missing its value shows the form it takes; a stray
 * argument says the command takes none.
 *
 * @example
 * ```ts
 * const { values } = parseFlags("deno task eval", { args: ["--modle", "m"], options: { model: { type: "string" } } });
 * // RangeError: deno task eval has no flag --modle; did you mean --model? Its flags: --model (see --help)
 * ```
 */
export function parseFlags<T extends ParseArgsConfig>(command: string, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (e) {
    const code = (e as { code?: string }).code;
    const message = (e as Error).message;
    const flag = /'(-[^' <]*)/.exec(message)?.[1] ?? "";
    const names = flagNames(config.options);
    const option = Object.entries(config.options ?? {}).find(([n, o]) => flag === `--${n}` || flag === `-${o.short}`);
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const bare = flag.split("=")[0];
      const near = closest(bare, names.filter((n) => n.startsWith("--")));
      throw new RangeError(
        `${command} has no flag ${bare}${near ? `; did you mean ${near}?` : "."} Its flags: ${names.join(", ")} ` +
          `(see ${command} --help)`,
      );
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option) {
      const [name, o] = option;
      throw new RangeError(
        o.type === "boolean"
          ? `--${name} is a switch and takes no value: write --${name} alone (see ${command} --help)`
          : `--${name} needs a value: --${name} VALUE, or --${name}=VALUE for a value that starts with "-" ` +
            `(see ${command} --help)`,
      );
    }
    if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
      const arg = /'([^']*)'/.exec(message)?.[1] ?? "";
      throw new RangeError(
        `${command} takes no argument "${arg}" without a flag; its flags: ${names.join(", ")} (see ${command} --help)`,
      );
    }
    throw e;
  }
}

/** The environment variable that turns every command into a dry run (tests/cli/help_examples_test.ts sets it). */
export const DRY_RUN_ENV = "CRUCIBLE_DRY_RUN";

/**
 * With CRUCIBLE_DRY_RUN=1, prints "dry run: <what>" and returns true: the command has checked its flags (and its
 * config, where it has one) and stops before it reads a model or starts any work. Otherwise returns false.
 */
export function dryRun(what: string): boolean {
  if (!Deno.env.get(DRY_RUN_ENV)) return false;
  console.log(`dry run: ${what}`);
  return true;
}

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
