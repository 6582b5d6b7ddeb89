/**
 * `deno task bench bfcl-replay --data-dir DIR`: the fidelity check of Crucible's BFCL environment on BFCL's own files.
 * Every multi-turn entry's ground truth is played twice: as the model's calls straight into the checker (all must
 * pass: the classes reproduce Python's results and states), and through an episode as a model would send it (BFCL's
 * python form, then a text reply per turn), where ground truth written with positional arguments fails as it does
 * in BFCL, whose decoder keeps keyword arguments only. Also counts how many entries fail once their last call is
 * dropped (the checker is not vacuous).
 */
import { newInstance } from "../tasks/bfcl/classes/api.ts";
import { checkEntry, parseGroundTruth } from "../tasks/bfcl/checker.ts";
import { loadBfclDir } from "../tasks/bfcl/entries.ts";
import { BfclEpisode } from "../tasks/bfcl/episode.ts";
import { dryRun, parseFlags } from "../src/command/args.ts";

/** Usage text of the `bfcl-replay` subcommand. */
export const BFCL_REPLAY_USAGE = "Usage: deno task bench bfcl-replay --data-dir DIR [--json]\n" +
  "  --data-dir  BFCL's data directory, laid out as gorilla's berkeley-function-call-leaderboard/bfcl_eval/data/\n" +
  "  --json      one JSON line per category instead of text";

/** Runs the replay and prints counts by category. */
export async function main(args: string[]): Promise<void> {
  const { values } = parseFlags("deno task bench bfcl-replay", {
    args,
    options: { "data-dir": { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) return console.log(BFCL_REPLAY_USAGE);
  if (!values["data-dir"]) throw new TypeError(`--data-dir DIR is required.\n${BFCL_REPLAY_USAGE}`);
  if (dryRun(`would replay ${values["data-dir"]}`)) return;
  const { entries, docs } = await loadBfclDir(values["data-dir"]);
  const rows: Record<string, { entries: number; checker: number; episode: number; cut: number; cutFailed: number }> =
    {};
  for (const e of entries) {
    const row = rows[e.category] ??= { entries: 0, checker: 0, episode: 0, cut: 0, cutFailed: 0 };
    row.entries++;
    const turns = e.groundTruth.map((turn, t) => turn.length ? [turn.map((c) => parseGroundTruth(e, t, c))] : []);
    if (checkEntry(e, turns, newInstance).valid) row.checker++;
    const last = turns.length - 1;
    if (turns[last].length) {
      row.cut++;
      const cut = turns.map((s, t) => t === last ? [s[0].slice(0, -1)] : s);
      if (!checkEntry(e, cut, newInstance).valid) row.cutFailed++;
    }
    const ep = new BfclEpisode(e, docs, newInstance);
    ep.reset();
    let reward = 0;
    for (const turn of e.groundTruth) {
      if (turn.length) ep.step(`[${turn.join(", ")}]`);
      reward = ep.step("Done.").reward;
    }
    if (reward === 1) row.episode++;
  }
  for (const [category, r] of Object.entries(rows)) {
    if (values.json) console.log(JSON.stringify({ category, ...r }));
    else {
      console.log(
        `${category}: ${r.checker}/${r.entries} pass the checker on their ground truth, ${r.episode}/${r.entries} ` +
          `played through an episode; ${r.cutFailed}/${r.cut} fail without their last call`,
      );
    }
  }
}
