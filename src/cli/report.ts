/**
 * `deno task report RUN_DIR [RUN_DIR ...] [--out FILE] [--tensorboard DIR]`: rebuilds a run's report.html from its
 * logs, or writes one report that overlays several runs (one series per run in each chart); with --tensorboard, also
 * a TensorBoard event file per run. Lines that cannot be read are named on stderr and in the page, and skipped.
 */
import { writeComparison } from "../report/write.ts";
import { dryRun, parseFlags } from "../command/args.ts";
import { writeTensorBoard } from "../report/tensorboard.ts";

const USAGE = `Usage: deno task report RUN_DIR [RUN_DIR ...] [--out FILE] [--tensorboard DIR]

Builds the static report of run folders from their config.yaml, metrics.jsonl, evals.jsonl and rollouts.jsonl: every
logged scalar charted in groups (smoothing, x by step or wall time, hover values, drag to zoom), the evaluations by
category, and an episode browser. One file, no server or network needed: open it from disk. A line that cannot be
read (cut off, or holding NaN or Infinity) is named on stderr and in the page, and skipped.

Options:
  RUN_DIR       a run folder written by deno task train or deno task pretrain; several are overlaid for comparison
  --out FILE    where to write the page (default RUN_DIR/report.html for one run, FIRST_RUN_DIR/compare.html for
                several)
  --tensorboard DIR
                also write each run's scalars as a TensorBoard event file, DIR/<run name>/events.out.tfevents.*
                (tags rl/..., sft/..., eval/...; a value the run did not log has no point); then
                tensorboard --logdir DIR
  -h, --help    this help

Examples:
  deno task report runs/smoke                             # runs/smoke: deno task train --help
  deno task train textcraft_smoke --run-dir runs/smoke-rloo algorithm.adv_estimator=rloo   # a run to compare
  deno task report runs/smoke runs/smoke-rloo --out /tmp/grpo-vs-rloo.html
  deno task report runs/smoke runs/smoke-rloo --tensorboard /tmp/tb`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals: dirs } = parseFlags("deno task report", {
    args,
    allowPositionals: true,
    options: { out: { type: "string" }, tensorboard: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (v.help) return console.log(USAGE);
  if (dirs.length === 0) throw new RangeError(`deno task report needs a run folder\n${USAGE}`);
  if (v.tensorboard === "") throw new RangeError("--tensorboard needs a folder, e.g. --tensorboard /tmp/tb");
  if (dryRun(`would write the report of ${dirs.join(", ")}`)) return;
  for (const dir of dirs) {
    const info = await Deno.stat(dir).catch(() => undefined);
    if (!info?.isDirectory) {
      throw new RangeError(`Run folder "${dir}" does not exist; pass the folder a run wrote (e.g. runs/<task>-<time>)`);
    }
    const logs = await Promise.all(
      ["metrics", "evals", "rollouts"].map((f) => Deno.stat(`${dir}/${f}.jsonl`).catch(() => undefined)),
    );
    if (logs.every((l) => l === undefined)) {
      throw new RangeError(`"${dir}" holds no metrics.jsonl, evals.jsonl or rollouts.jsonl; is it a run folder?`);
    }
  }
  const first = dirs[0].replace(/\/+$/, "");
  const out = v.out ?? (dirs.length === 1 ? `${first}/report.html` : `${first}/compare.html`);
  console.log(`Wrote ${await writeComparison(dirs, out)}`);
  if (v.tensorboard !== undefined) {
    for (const f of await writeTensorBoard(dirs, v.tensorboard)) console.log(`Wrote ${f}`);
    console.log(`View with: tensorboard --logdir ${v.tensorboard}`);
  }
}
