/**
 * `deno task train [NAME|CONFIG.yaml] [--model DIR] [--env-url URL ...] [--run-dir DIR] [--resume RUN_DIR]
 * [key.path=value ...]`: trains as the config says (SFT warm start, then RL), writing a run folder. Ctrl-C saves a
 * checkpoint and prints how to resume; a second Ctrl-C quits at once.
 */
import { parseArgs } from "node:util";
import { resolveConfig } from "../config/load.ts";
import { configSource, PRESET_NAMES } from "../config/presets.ts";
import { runTraining } from "../train/run.ts";
import { writeReport } from "../train/report.ts";
import { terminalReporter } from "./progress.ts";

const USAGE = `Usage: deno task train [${PRESET_NAMES.join("|")}|CONFIG.yaml] [--model DIR] [--env-url URL ...] ` +
  "[--run-dir DIR] [--resume RUN_DIR] [key.path=value ...]";

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      "env-url": { type: "string", multiple: true },
      "run-dir": { type: "string" },
      resume: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  const overrides = positionals.filter((p) => p.includes("="));
  const names = positionals.filter((p) => !p.includes("="));
  if (names.length > 1) throw new TypeError(`Give one config name or file, got ${names.join(", ")}. ${USAGE}`);
  if (v.model) overrides.push(`model.path=${JSON.stringify(v.model)}`);
  if (v["env-url"]) overrides.push(`env.urls=${JSON.stringify(v["env-url"])}`);
  let runDir: string;
  let source;
  if (v.resume) {
    runDir = v.resume.replace(/\/+$/, "");
    source = { text: await readRunConfig(runDir), name: `${runDir}/config.yaml` };
  } else {
    source = await configSource(names[0] ?? "textcraft");
  }
  const config = resolveConfig(source, overrides);
  runDir ??= v["run-dir"] ?? `${config.trainer.runs_dir}/${config.task}-${stamp()}`;
  const stops = stopOnSignals();
  try {
    const summary = await runTraining({
      config,
      runDir,
      resume: v.resume !== undefined,
      reporter: terminalReporter(),
      stopRequested: stops.requested,
    });
    const report = await writeReport(runDir);
    const pct = (x?: { avg: number }) => (x ? `${(100 * x.avg).toFixed(1)}%` : "n/a");
    if (summary.interrupted) {
      console.log(`Interrupted. Saved ${summary.lastCheckpoint}. Resume with: deno task train --resume ${runDir}`);
    } else {
      console.log(
        `Done in ${(summary.seconds / 60).toFixed(1)} min. Test success: ${pct(summary.sftEval)} after SFT, ` +
          `${pct(summary.finalEval)} after RL. Run folder ${runDir}, report ${report}`,
      );
    }
  } finally {
    stops.release();
  }
}

/**
 * Ctrl-C, SIGTERM and SIGHUP ask a run to finish its step, save and stop; a second signal quits at once.
 * `release` removes the listeners.
 */
export function stopOnSignals(): { requested: () => boolean; release: () => void } {
  let stops = 0;
  const onSignal = () => {
    stops++;
    if (stops > 1) {
      console.error("\nStopped without saving.");
      Deno.exit(130);
    }
    console.error("\nStopping after the current step; a checkpoint will be saved (a second signal quits at once).");
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  return {
    requested: () => stops > 0,
    release: () => signals.forEach((s) => Deno.removeSignalListener(s, onSignal)),
  };
}

/** The saved config of a run folder, for --resume. */
export async function readRunConfig(runDir: string): Promise<string> {
  try {
    return await Deno.readTextFile(`${runDir}/config.yaml`);
  } catch {
    throw new Deno.errors.NotFound(
      `${runDir}/config.yaml is missing: --resume needs a run folder made by deno task train`,
    );
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
