/**
 * The program the benchmarks measure, as a user runs it: its entry point (src/cli/main.ts), started as a child
 * process (`deno run -A PROGRAM train ...`), never imported, so the program's module graph never reaches bench/.
 */
export const PROGRAM: string = new URL("../src/cli/main.ts", import.meta.url).href;
