/**
 * `deno task train [NAME|CONFIG.yaml] [--model DIR] [--env-url URL ...] [--run-dir DIR] [--resume RUN_DIR]
 * [key.path=value ...]`: trains as the config says (SFT warm start, then RL), writing a run folder. A signal saves
 * a checkpoint and prints how to resume; a second one quits at once. See USAGE for everything.
 */
import { resolveConfig } from "../config/load.ts";
import { configSource, PRESET_NAMES } from "../config/presets.ts";
import { learnerOf } from "../config/schema.ts";
import { runTraining } from "../train/run.ts";
import { curriculumConfigs, isCurriculum, parseCurriculum, runCurriculum } from "../train/curriculum.ts";
import type { ConfigSource } from "../config/load.ts";
import { writeReport } from "../report/write.ts";
import { terminalReporter } from "../command/progress.ts";
import { dryRun, parseFlags } from "../command/args.ts";
import { coverage, type EvalResult } from "../train/eval.ts";
import { connectCluster } from "../cluster/nats.ts";
import { readCredentials } from "../cluster/credentials.ts";
import { ClusterSource } from "../cluster/learner.ts";

const USAGE = `Usage: deno task train [${PRESET_NAMES.join("|")}|CONFIG.yaml] [options] [key.path=value ...]

Trains an agent as the config says: a supervised warm start on the task's demonstrations (sft.*), then RL (GRPO,
RLOO or REINFORCE++ under a fixed or ScalingInter round schedule) or, by algorithm.learner, DPO on preference pairs
(data.preferences), ETO or AgentEvol in rounds, evaluating on the test split, in a run folder with config.yaml,
metrics.jsonl, rollouts.jsonl, evals.jsonl, checkpoints/ and report.html. Ctrl-C, SIGTERM and
SIGHUP finish the step, save a checkpoint and print how to resume; a second signal quits at once.

Options:
  NAME|CONFIG.yaml     a shipped config (default textcraft) or a YAML file holding what it changes
  --model DIR          the model to start from (a Hugging Face directory, a Crucible checkpoint or a Hub name
                       org/name[@revision], downloaded once into the Hugging Face cache; config model.path)
  --env-url URL        a running AgentGym server (repeatable; config env.urls); default the task's embedded server
  --run-dir DIR        the run folder (default runs/<task>-<time>); it must not hold a run already
  --resume RUN_DIR     continue a run from its latest checkpoint, bit for bit
  --fresh-optimizer    with --resume: go on even if the checkpoint's optimizer state is missing
  --cluster URL        play RL's rollouts on workers over NATS JetStream (deno task cluster up; deno task worker
                       --cluster URL); rollout.max_staleness lets them run that many versions ahead
  --creds FILE         with --cluster: the learner's credentials (DATA/creds/learner.creds, written by cluster up);
                       required beyond loopback
  key.path=value       config overrides, applied last (e.g. actor.lr=1e-5 trainer.total_steps=50)

A curriculum file (a top-level \`curriculum:\` key, e.g. bfcl) runs its stages one after another in one run
folder (stage1-<name>/, ...), each from the previous stage's last checkpoint, promoted when its rule's metric passes
or after its trainer.total_steps; --resume goes on in the stage it stopped in. See docs/bfcl.md.

Exit codes: 0 the run completed; 3 it stopped early with a checkpoint that --resume continues from (a signal, an
environment that stayed down or kept failing past env.max_step_retries / env.max_abandoned_steps /
env.outage_minutes); 2 a bad input or a diverged run (steps that blew the weights up, trainer.max_norm_growth, or
whose loss spiked, trainer.loss_spike_factor, are rolled back and skipped up to trainer.max_rollbacks times; one more,
or gradients that stayed non-finite, trainer.max_skipped_steps): nothing of it is saved and no final is written.

Examples:
  deno task train textcraft
  deno task train textcraft_smoke --run-dir runs/smoke   # 26 s: the run folder the other commands' examples read
  deno task train bfcl                    # EnvTuning's three stages from models/bfcl-base
  deno task train textcraft_eto           # ETO's rounds of exploring and DPO after the warm start
  deno task train textcraft data.preferences=pairs.jsonl   # DPO on TRL's or AgentGym's pairs
  deno task train textcraft algorithm.rounds_ctrl.type=fixed "algorithm.rounds_ctrl.rounds=[20]" trainer.total_steps=24`;

/** Exit code of a run that stopped early with a checkpoint to resume from. */
export const EXIT_STOPPED = 3;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task train", {
    args,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      "env-url": { type: "string", multiple: true },
      "run-dir": { type: "string" },
      resume: { type: "string" },
      "fresh-optimizer": { type: "boolean" },
      cluster: { type: "string" },
      creds: { type: "string" },
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
    const staged = `${runDir}/curriculum.yaml`;
    if (await Deno.stat(staged).then(() => true, () => false)) {
      return await trainCurriculum({ text: await Deno.readTextFile(staged), name: staged }, overrides, runDir, v);
    }
    source = { text: await readRunConfig(runDir), name: `${runDir}/config.yaml` };
  } else {
    source = await configSource(names[0] ?? "textcraft");
    if (isCurriculum(source)) return await trainCurriculum(source, overrides, v["run-dir"], v);
  }
  const config = resolveConfig(source, overrides, { onNote: (n) => console.error(`note: ${n}`) });
  runDir ??= v["run-dir"] ?? `${config.trainer.runs_dir}/${config.task}-${stamp()}`;
  const what = learnerOf(config) === "rl" ? `for ${config.trainer.total_steps} steps` : `with ${learnerOf(config)}`;
  if (dryRun(`would train ${config.task} ${what} into ${runDir}`)) return;
  if (!v.resume) await refuseExistingRun(runDir);
  if (v.creds && !v.cluster) throw new TypeError("--creds FILE goes with --cluster URL (the learner's credentials)");
  // Connect before anything slow, so a wrong URL fails within seconds.
  const cluster = v.cluster ? await connectLearner(v.cluster, v.creds) : undefined;
  const stops = stopOnSignals();
  try {
    const summary = await runTraining({
      source: cluster && ((run) => ClusterSource.start(cluster, run)),
      config,
      runDir,
      resume: v.resume !== undefined,
      reporter: terminalReporter(),
      stopRequested: stops.requested,
      freshOptimizer: v["fresh-optimizer"],
    });
    const report = await writeReport(runDir);
    const pct = (x?: EvalResult) => {
      if (!x) return "n/a";
      const left = x.envFailures + (x.overflows ?? 0);
      const played = left > 0 ? `, over ${x.episodes} played of ${x.episodes + left}` : "";
      return `${(100 * x.avg).toFixed(1)}% (${coverage(x)}${played})`;
    };
    if (summary.interrupted) {
      console.log(`Interrupted. Saved ${summary.lastCheckpoint}. Resume with: deno task train --resume ${runDir}`);
      Deno.exitCode = EXIT_STOPPED;
    } else {
      const mean = (x?: EvalResult) => (x ? x.meanReward.toFixed(3) : "n/a");
      const learner = learnerOf(config), after = learner === "rl" ? "RL" : learner;
      console.log(
        `Done in ${(summary.seconds / 60).toFixed(1)} min. Test success: ${pct(summary.sftEval)} after SFT, ` +
          `${pct(summary.finalEval)} after ${after}; mean reward ${mean(summary.sftEval)} after SFT, ` +
          `${mean(summary.finalEval)} after ${after}. Run folder ${runDir}, report ${report}`,
      );
    }
  } finally {
    stops.release();
    await cluster?.close();
  }
}

/** The learner's connection: its credentials checked, or the note that it has none. */
async function connectLearner(url: string, credsFile: string | undefined) {
  const creds = credsFile ? await readCredentials(credsFile) : undefined;
  if (creds && creds.role !== "learner") {
    throw new TypeError(
      `${credsFile} is worker ${creds.name}'s credentials; the learner takes learner.creds from the same folder`,
    );
  }
  return await connectCluster(url, { name: "learner", creds, note: (line) => console.error(line) });
}

/** A curriculum's stages (src/train/curriculum.ts), new in `dir` (default runs/<task>-staged-<time>) or resumed. */
async function trainCurriculum(
  source: ConfigSource,
  overrides: string[],
  dir: string | undefined,
  v: { resume?: string; "fresh-optimizer"?: boolean; cluster?: string },
): Promise<void> {
  if (v.cluster) {
    const base = parseCurriculum(source).base;
    throw new TypeError(
      `--cluster is not available for a curriculum (${source.name}); run its base run config (${base}) or its ` +
        "stages' configs one by one with --cluster",
    );
  }
  const { spec, stageConfig } = await curriculumConfigs(source, overrides);
  const first = stageConfig(0, undefined);
  const runDir = v.resume ? dir! : dir ?? `${first.trainer.runs_dir}/${first.task}-staged-${stamp()}`;
  const what = `${spec.stages.map((s) => s.name).join(" -> ")} (${first.task})`;
  if (dryRun(`would train the curriculum ${what} into ${runDir}`)) return;
  if (!v.resume) await refuseExistingRun(runDir);
  const stops = stopOnSignals();
  try {
    const summary = await runCurriculum({
      source,
      overrides,
      dir: runDir,
      resume: v.resume !== undefined,
      reporter: terminalReporter(),
      stopRequested: stops.requested,
      freshOptimizer: v["fresh-optimizer"],
      onNote: (n) => console.error(`note: ${n}`),
    });
    for (const s of summary.stages) await writeReport(s.dir);
    if (summary.interrupted) {
      console.log(`Interrupted. Saved ${summary.lastCheckpoint}. Resume with: deno task train --resume ${runDir}`);
      Deno.exitCode = EXIT_STOPPED;
    } else {
      const x = summary.finalEval;
      const done = summary.stages.map((s) => `${s.name} ${s.status} at step ${s.step}`).join(", ");
      console.log(
        `Done in ${(summary.seconds / 60).toFixed(1)} min: ${done}. Test success after the last stage: ` +
          `${x ? `${(100 * x.avg).toFixed(1)}% (${coverage(x)})` : "n/a"}. Curriculum folder ${runDir}`,
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
export function stopOnSignals(
  note = "Stopping after the current step; a checkpoint will be saved (a second signal quits at once).",
): { requested: () => boolean; release: () => void } {
  let stops = 0;
  const onSignal = () => {
    stops++;
    if (stops > 1) {
      console.error("\nStopped without saving.");
      Deno.exit(130);
    }
    console.error(`\n${note}`);
  };
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  return {
    requested: () => stops > 0,
    release: () => signals.forEach((s) => Deno.removeSignalListener(s, onSignal)),
  };
}

/** Stops when `dir` already holds a run, so that a new run never overwrites or mixes with an old one. */
export async function refuseExistingRun(dir: string): Promise<void> {
  for (const f of ["config.yaml", "metrics.jsonl", "checkpoints", "curriculum.yaml"]) {
    if (await Deno.stat(`${dir}/${f}`).then(() => true, () => false)) {
      throw new Deno.errors.AlreadyExists(
        `${dir} already holds a run (${f}); continue it with --resume ${dir}, or give another --run-dir`,
      );
    }
  }
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
