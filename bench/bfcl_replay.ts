/**
 * `deno task bench bfcl-replay --data-dir DIR [--upstream DIR]`: the fidelity check of Crucible's BFCL environment on
 * BFCL's own files. Every multi-turn entry's ground truth is played as the model's calls straight into the checker
 * (all must pass) and through an episode as a model sends it (BFCL's prompting form, then a text reply a turn; every
 * entry must end passed); it also counts the entries that fail once their last call is dropped (the checker is not
 * vacuous). With `--upstream`, gorilla's own Python classes run the same calls (bfcl_upstream.py) and every call's
 * result text and every turn's instance states are compared with the episode's, byte for byte; `--variants` also
 * plays rewrites of every call (ints as floats, floats as ints, keywords as positionals, shifted, negated and
 * stringified numbers: bfcl_fidelity.ts) through both engines. Exit status 1 when anything differs or fails.
 */
import { newInstance } from "../tasks/bfcl/classes/api.ts";
import { checkEntry, parseGroundTruth } from "../tasks/bfcl/checker.ts";
import { type BfclEntry, loadBfclDir } from "../tasks/bfcl/entries.ts";
import { BfclEpisode } from "../tasks/bfcl/episode.ts";
import { dryRun, parseFlags } from "../src/command/args.ts";
import { compareEntry, type Mismatch, upstreamLines, variantEntry, VARIANTS } from "./bfcl_fidelity.ts";

/** Usage text of the `bfcl-replay` subcommand. */
export const BFCL_REPLAY_USAGE =
  "Usage: deno task bench bfcl-replay --data-dir DIR [--upstream DIR [--variants] [--python BIN]] [--show N] [--json]\n" +
  "  --data-dir  BFCL's data directory, laid out as gorilla's berkeley-function-call-leaderboard/bfcl_eval/data/\n" +
  "  --upstream  gorilla's berkeley-function-call-leaderboard folder (the one holding bfcl_eval/): its Python classes\n" +
  "              run the same calls and every result and state is compared (needs python3 and python3-mpmath)\n" +
  "  --variants  with --upstream, also every call rewritten: " + VARIANTS.join(", ") + "\n" +
  "  --python    the Python to run upstream's classes with (default python3)\n" +
  "  --show      print the first N differences (default 10)\n" +
  "  --json      one JSON line per category (and per variant) instead of text\n\n" +
  "Examples:\n" +
  "  deno task bench bfcl-replay --data-dir gorilla/berkeley-function-call-leaderboard/bfcl_eval/data\n" +
  "  deno task bench bfcl-replay --data-dir gorilla/berkeley-function-call-leaderboard/bfcl_eval/data \\\n" +
  "    --upstream gorilla/berkeley-function-call-leaderboard --variants";

/** Counts of one category (or one variant's category). */
interface Row {
  entries: number;
  checker: number;
  episode: number;
  cut: number;
  cutFailed: number;
  calls?: number;
  callsEqual?: number;
  turns?: number;
  statesEqual?: number;
}

/** The checker and episode counts of one entry, without upstream. */
function playAlone(e: BfclEntry, docs: Awaited<ReturnType<typeof loadBfclDir>>["docs"], row: Row): void {
  row.entries++;
  const turns = e.groundTruth.map((turn, t) => turn.length ? [turn.map((c) => parseGroundTruth(e, t, c))] : []);
  if (checkEntry(e, turns, newInstance).valid) row.checker++;
  const last = turns.length - 1;
  if (turns[last].length) {
    row.cut++;
    const cut = turns.map((s, t) => t === last ? [s[0].slice(0, -1)] : s);
    if (!checkEntry(e, cut, newInstance).valid) row.cutFailed++;
  }
  const ep = new BfclEpisode(e, docs, newInstance, { format: "python" });
  ep.reset();
  let passed = false;
  for (const turn of e.groundTruth) {
    if (turn.length) ep.step(`[${turn.join(", ")}]`);
    passed = ep.step("Done.").info.passed === true;
  }
  if (passed) row.episode++;
}

function describe(m: Mismatch): string {
  const at = `${m.id} turn ${m.turn}`;
  if (m.kind === "result") return `${at}: ${m.call}\n    crucible: ${m.crucible}\n    upstream: ${m.upstream}`;
  if (m.kind === "state") return `${at}: ${m.className}.${m.attribute} differs from upstream's after the turn`;
  if (m.kind === "count") return `${at}: ${m.crucible} results where upstream has ${m.upstream}`;
  return `${at}: the checker failed the ground truth: ${m.reason}`;
}

/** Runs the replay and prints counts by category; exits 1 when an entry fails or an engine differs. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench bfcl-replay", {
    args,
    options: {
      "data-dir": { type: "string" },
      upstream: { type: "string" },
      variants: { type: "boolean" },
      python: { type: "string" },
      show: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return console.log(BFCL_REPLAY_USAGE);
  const dataDir = values["data-dir"];
  if (!dataDir) throw new TypeError(`--data-dir DIR is required.\n${BFCL_REPLAY_USAGE}`);
  if (values.variants && !values.upstream) throw new TypeError("--variants compares with upstream: add --upstream DIR");
  const show = Number(values.show ?? 10);
  if (!Number.isInteger(show) || show < 0) throw new RangeError(`--show ${values.show}: expected a whole number >= 0`);
  if (dryRun(`would replay ${dataDir}${values.upstream ? ` against ${values.upstream}` : ""}`)) return;
  const { entries, docs } = await loadBfclDir(dataDir);
  const rows: Record<string, Row> = {};
  for (const e of entries) {
    playAlone(e, docs, rows[e.category] ??= { entries: 0, checker: 0, episode: 0, cut: 0, cutFailed: 0 });
  }
  let bad = Object.values(rows).some((r) => r.checker < r.entries || r.episode < r.entries);
  const mismatches: Mismatch[] = [];
  if (values.upstream) {
    for (const variant of [undefined, ...(values.variants ? VARIANTS : [])]) {
      const played = variant ? entries.map((e) => variantEntry(e, variant)) : entries;
      const byId = new Map(played.map((e) => [e.id, e]));
      let answers: string | undefined;
      if (variant) {
        answers = await Deno.makeTempFile({ prefix: `bfcl-${variant}-`, suffix: ".jsonl" });
        await Deno.writeTextFile(
          answers,
          played.map((e) => JSON.stringify({ id: e.id, ground_truth: e.groundTruth })).join("\n"),
        );
      }
      try {
        const lines = upstreamLines({ upstream: values.upstream, dataDir, python: values.python, answers });
        for await (const line of lines) {
          const e = byId.get(line.id);
          if (!e) throw new Error(`bfcl_upstream.py answered for ${line.id}, which ${dataDir} does not hold`);
          const r = compareEntry(e, docs, line);
          const row = variant
            ? (rows[`${e.category} (${variant})`] ??= { entries: 0, checker: 0, episode: 0, cut: 0, cutFailed: 0 })
            : rows[e.category];
          if (variant) row.entries++;
          row.calls = (row.calls ?? 0) + r.calls;
          row.callsEqual = (row.callsEqual ?? 0) + r.callsEqual;
          row.turns = (row.turns ?? 0) + r.turns;
          row.statesEqual = (row.statesEqual ?? 0) + r.statesEqual;
          // A variant's calls may fail as Python fails them; only its results and states must agree.
          mismatches.push(...(variant ? r.mismatches.filter((m) => m.kind !== "verdict") : r.mismatches));
        }
      } finally {
        if (answers) await Deno.remove(answers);
      }
    }
    bad ||= mismatches.length > 0 || Object.values(rows).some((r) => r.calls === undefined);
  }
  for (const [category, r] of Object.entries(rows)) {
    if (values.json) {
      console.log(JSON.stringify({ category, ...r }));
      continue;
    }
    const vs = r.calls === undefined
      ? ""
      : `; upstream: ${r.callsEqual}/${r.calls} call results identical, ${r.statesEqual}/${r.turns} turns' states equal`;
    const own = category.includes("(")
      ? `${r.entries} entries`
      : `${r.checker}/${r.entries} pass the checker on their ground truth, ${r.episode}/${r.entries} played through ` +
        `an episode; ${r.cutFailed}/${r.cut} fail without their last call`;
    console.log(`${category}: ${own}${vs}`);
  }
  if (mismatches.length) {
    console.log(`${mismatches.length} differences; the first ${Math.min(show, mismatches.length)}:`);
    mismatches.slice(0, show).forEach((m) => console.log(`  ${describe(m)}`));
  }
  if (bad) Deno.exitCode = 1;
}
