/**
 * `deno task bench train [NAME|CONFIG.yaml] [--json] [--run-dir DIR] [key.path=value ...]`: a training job as a
 * benchmark. Runs `deno task train NAME` (default `textcraft`, the main job) on the embedded defaults (plus any
 * overrides) in this process, into a fresh run folder, and prints its wall time, the test success it starts from,
 * the final test success and the gap between them, the mean episode reward of each evaluation, against its task's bar
 * (BARS, every one within 30 minutes on a 2-core machine). TextCraft's, with a warm start (sft.enabled), is the main
 * job's (issue 49: at least 91% of the test split, ScalingInter-7B's number on the same goals, with no category such as
 * depth 4 at 0%); without one (`textcraft_rl`: RL alone), RL's own gain (+15 points over the starting model). WebShop's
 * and BFCL's are issue 56's: WebShop success >= 30% and mean reward (WebShop's score) >= 0.60 with RL adding >= 5
 * points of mean reward over the warm start (15 over the base without one); BFCL >= 30% with RL adding >= 5 points of
 * success. The learners after a warm start other than RL (`textcraft_eto`, `webshop_eto`, `textcraft_agentevol`:
 * issue 58): 3 points of success over the warm start's own evaluation (the issue's bar is over SFT alone for the same
 * minutes, a run of its own: `sft.epochs=N trainer.total_steps=0`). It takes as long as the job: up to 30 minutes on a
 * CPU rasteriser.
 */
import { resolveConfig } from "../src/config/load.ts";
import { type LearnerName, learnerOf } from "../src/config/schema.ts";
import { configSource } from "../src/config/presets.ts";
import { getGpu } from "../src/gpu/device.ts";
import { coverage, type EvalResult } from "../src/train/eval.ts";
import { writeReport } from "../src/report/write.ts";
import { runTraining } from "../src/train/run.ts";
import { terminalReporter } from "../src/command/progress.ts";
import { dryRun, parseFlags } from "../src/command/args.ts";
import type { Reporter } from "../src/train/types.ts";
import { PROGRAM } from "./program.ts";

/** Usage text of the `train` subcommand. */
export const TRAIN_USAGE =
  "Usage: deno task bench train [NAME|CONFIG.yaml] [--json] [--run-dir DIR] [--no-extra] [key.path=value ...]\n" +
  "  NAME            the job: a shipped config (default textcraft, the main job; textcraft_rl, RL alone from the\n" +
  "                  base model; textcraft_eto, webshop_eto, textcraft_agentevol, the learners in rounds) or a\n" +
  "                  YAML file\n" +
  "  --no-extra      skip the evaluations outside the timed job (the final Pass@4, the final checkpoint's greedy\n" +
  "                  success on the train split, and the base model's success where a warm start is the bar's\n" +
  "                  reference; without SFT the base is the reference, and it is always evaluated)\n" +
  "  key.path=value  overrides of the config, e.g. trainer.total_steps=1 sft.epochs=0.01 " +
  "trainer.eval_limit=2\n" +
  "  --run-dir DIR   the run folder (default: <trainer.runs_dir>/bench-train-<time>; it must not exist)\n" +
  "  --json          one JSON object on stdout (progress goes to stderr)\n\n" +
  "Examples:\n" +
  "  deno task bench train\n" +
  "  deno task bench train textcraft_rl\n" +
  "  deno task bench train textcraft_eto\n" +
  "  deno task bench train textcraft_rl task_options.progress_reward=0.3 trainer.total_steps=10";

/** The learners in rounds (issue 58): this many points of success over the warm start, whatever the task. */
const GOAL_OVER_SFT_POINTS = 3;
const GOAL_MINUTES = 30;

/** What a bar reads of a run: its reference and each evaluation's success and mean reward (null: not measured). */
export interface BarInput {
  reference: "sft" | "base";
  /** Success (Avg@1, a fraction) of the reference evaluation and of the final one. */
  from: number | null;
  final: number | null;
  /** Mean episode reward of the reference evaluation and of the final one. */
  fromReward: number | null;
  finalReward: number | null;
  /** The final evaluation's Avg@1 by category (TextCraft: depth). */
  finalByCategory: Record<string, number>;
}

/** A task's bar: whether a finished run clears it (time aside), and what it needs, in a few words. */
export interface Bar {
  needs(reference: "sft" | "base"): string;
  /** Null when an evaluation it reads was not measured. */
  clears(r: BarInput): boolean | null;
}

const gained = (
  a: number | null,
  b: number | null,
  points: number,
) => (a === null || b === null ? null : 100 * (b - a) >= points);
const all = (...xs: (boolean | null)[]) => (xs.some((x) => x === null) ? null : xs.every(Boolean));

/**
 * The bars by task name (issues 49 and 56); a task without its own is judged by TextCraft's. TextCraft from a warm
 * start: a final test success of at least 91% with every category above 0% (depth 4 solved at all); RL alone: +15
 * points over the starting model. WebShop: success >= 30% and mean reward >= 0.60, RL adding >= 5 points of mean
 * reward over the warm start (>= 15 over the base without one). BFCL: success >= 30%, RL adding >= 5 points.
 */
export const BARS: Readonly<Record<string, Bar>> = {
  textcraft: {
    needs: (ref) => (ref === "base" ? "needs +15 points over the base" : "needs 91% with no depth at 0%"),
    clears: (r) =>
      r.reference === "base"
        ? gained(r.from, r.final, 15)
        : r.final === null
        ? null
        : r.final >= 0.91 && Object.values(r.finalByCategory).every((x) => x > 0),
  },
  webshop: {
    needs: (ref) =>
      `needs success >= 30%, mean reward >= 0.60 and ${ref === "base" ? "+15" : "+5"} points of mean reward over the ${
        ref === "base" ? "base" : "warm start"
      }`,
    clears: (r) =>
      all(
        r.final === null ? null : r.final >= 0.3,
        r.finalReward === null ? null : r.finalReward >= 0.6,
        gained(r.fromReward, r.finalReward, r.reference === "base" ? 15 : 5),
      ),
  },
  bfcl: {
    needs: (ref) => `needs success >= 30% and +5 points over the ${ref === "base" ? "base" : "warm start"}`,
    clears: (r) => all(r.final === null ? null : r.final >= 0.3, gained(r.from, r.final, 5)),
  },
};

/** The bar of `task`'s jobs (TextCraft's for a task without one of its own). */
export function barOf(task: string): Bar {
  return BARS[task] ?? BARS.textcraft;
}

/** What `bench train` reports (the JSON object). Successes are fractions in [0, 1]; null when not measured. */
export interface TrainBenchReport {
  config: string;
  /** The job's task, whose bar it is judged by (BARS). */
  task: string;
  overrides: string[];
  runDir: string;
  adapter: string;
  wallSeconds: number;
  /** What learned after the warm start (algorithm.learner, resolved). */
  learner: LearnerName;
  /** What the gap is measured from: the warm start's evaluation (`sft`), or the starting model's (`base`, no SFT). */
  reference: "sft" | "base";
  sftSuccess: number | null;
  finalSuccess: number | null;
  /** The mean episode reward of the starting model's, the warm start's and the final evaluation (WebShop's score). */
  baseReward: number | null;
  sftReward: number | null;
  finalReward: number | null;
  /** (final - reference) x 100. */
  gapPoints: number | null;
  testTasks: number | null;
  /** The test split's size when the evaluations covered only part of it (trainer.eval_limit), else null. */
  testSplitTasks?: number | null;
  interrupted: boolean;
  /**
   * Whether the run meets its bar within 30 minutes: RL, its task's (BARS); the learners in rounds, +3 points of
   * success over the warm start; null when an evaluation it needs is missing.
   */
  meetsBar: boolean | null;
  /**
   * Seconds of all RL steps by phase (the rollout split into prefill, decode and waiting for the environment); for
   * the learners in rounds, exploring, the reference's log-probabilities and the optimizer steps.
   */
  phases: Record<string, number>;
  /** Mean share of prompt groups per RL step whose episodes differ in reward (GRPO's signal). */
  signal: number | null;
  /** The starting model's greedy test success, before any training of this job. */
  baseSuccess: number | null;
  /** Avg@1 by category (TextCraft: depth) of the base, after SFT and final. */
  byDepth: Record<string, Record<string, number>>;
  /** The final checkpoint's Pass@4 (4 samples per task at temperature 1). */
  pass4: number | null;
  /** The final checkpoint's greedy Avg@1 on the train split (what RL trained on), beside the test's: learning, not
   * memorising, shows as both rising together. Null when not measured. */
  trainSplitSuccess: number | null;
  /** How many train-split tasks that covered, and the split's size. */
  trainSplitTasks: number | null;
  trainSplitSize: number | null;
}

function depths(e?: EvalResult): Record<string, number> {
  return Object.fromEntries(Object.entries(e?.byCategory ?? {}).map(([k, r]) => [k, r.avg]));
}

/**
 * Sums the RL steps' phase times and averages their signal share, from the run's metrics.jsonl. A phase no step
 * logged is absent (a run without RL steps has none), never 0 s.
 */
export async function rlPhases(runDir: string): Promise<{ phases: Record<string, number>; signal: number | null }> {
  const text = await Deno.readTextFile(`${runDir}/metrics.jsonl`).catch(() => "");
  const lines = text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const rl = lines.filter((m) => m.phase === "rl");
  const rounds = lines.filter((m) => ["dpo_round", "agentevol_round", "dpo", "agentevol"].includes(m.phase));
  const phases: Record<string, number> = {};
  const sum = (of: typeof lines, key: string) => {
    const logged = of.map((m) => m[`time_${key}_s`]).filter((x): x is number => typeof x === "number");
    if (logged.length > 0) phases[key] = logged.reduce((a, x) => a + x, 0);
  };
  for (const key of ["prefill", "decode", "env", "logprobs", "update"]) sum(rl, key);
  for (const key of ["explore", "reference", "update"]) sum(rounds, key);
  const signal = rl.length === 0 ? null : rl.reduce((a, m) => a + (m.groups_with_signal ?? 0), 0) / rl.length;
  return { phases, signal };
}

/** Runs the `train` subcommand. */
export async function main(args: string[]): Promise<void> {
  const { values, positionals } = parseFlags("deno task bench train", {
    args,
    allowPositionals: true,
    options: {
      json: { type: "boolean", default: false },
      "run-dir": { type: "string" },
      "no-extra": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) return console.log(TRAIN_USAGE);
  const names = positionals.filter((p) => !p.includes("="));
  const overrides = positionals.filter((p) => p.includes("="));
  if (names.length > 1) {
    throw new TypeError(
      `bench train takes one config name and key.path=value overrides, got ${names.join(", ")}. ${TRAIN_USAGE}`,
    );
  }
  const source = await configSource(names[0] ?? "textcraft");
  const config = resolveConfig(source, overrides);
  const reference = config.sft.enabled ? "sft" : "base";
  const learner = learnerOf(config);
  if (dryRun(`would run ${source.name} end to end`)) return;
  const runDir = values["run-dir"] ?? `${config.trainer.runs_dir}/bench-train-${stamp()}`;
  if (await exists(runDir)) throw new RangeError(`Run folder ${runDir} exists; bench train needs a fresh one`);
  const gpu = await getGpu();
  const base = terminalReporter();
  // With --json, stdout carries the one object: the run's own lines go to stderr with the bars.
  const reporter: Reporter = values.json ? { bar: base.bar, line: (text) => console.error(text) } : base;
  const t0 = performance.now();
  const summary = await runTraining({ config, runDir, resume: false, reporter, stopRequested: () => false });
  await writeReport(runDir);
  const wallSeconds = (performance.now() - t0) / 1000;
  // Outside the timed job: the starting model's greedy success and the final checkpoint's Pass@4.
  const limit = config.trainer.eval_limit > 0 ? ["--limit", String(config.trainer.eval_limit)] : [];
  const baseEval = config.model.path && (reference === "base" || !values["no-extra"])
    ? await evalJson([config.model.path, ...limit])
    : undefined;
  const extra = values["no-extra"] ? {} : {
    pass4: summary.lastCheckpoint
      ? await evalJson([summary.lastCheckpoint, "--samples-per-task", "4", "--temperature", "1", ...limit])
      : undefined,
    trainSplit: summary.lastCheckpoint
      ? await evalJson([summary.lastCheckpoint, "--split", config.data.train_split, ...limit])
      : undefined,
  };
  const report = trainReport({
    ...extra,
    task: config.task,
    base: baseEval,
    ...await rlPhases(runDir),
    reference,
    learner,
    config: source.name,
    overrides,
    runDir,
    adapter: gpu.name,
    wallSeconds,
    sft: summary.sftEval,
    final: summary.finalEval,
    interrupted: summary.interrupted,
  });
  if (values.json) console.log(JSON.stringify(report));
  else reportLines(report).forEach((l) => console.log(l));
}

/** `deno task eval --json` on a model, in a subprocess (the same program), for numbers outside the timed job. */
async function evalJson(args: string[]): Promise<EvalResult> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", PROGRAM, "eval", "--model", ...args, "--json"],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (r.code !== 0) throw new Error(`deno task eval --model ${args.join(" ")} failed`);
  return JSON.parse(new TextDecoder().decode(r.stdout).trim().split("\n").pop()!) as EvalResult;
}

/** The report of a finished run. */
export function trainReport(r: {
  /** The job's task (default textcraft), whose bar judges it. */
  task?: string;
  base?: EvalResult;
  pass4?: EvalResult;
  trainSplit?: EvalResult;
  phases?: Record<string, number>;
  signal?: number | null;
  config: string;
  overrides: string[];
  runDir: string;
  adapter: string;
  wallSeconds: number;
  sft?: EvalResult;
  final?: EvalResult;
  interrupted: boolean;
  /** What the gap is measured from; default `sft` (the main job). */
  reference?: "sft" | "base";
  /** What learned after the warm start; default rl. */
  learner?: LearnerName;
}): TrainBenchReport {
  const reference = r.reference ?? "sft", task = r.task ?? "textcraft", learner = r.learner ?? "rl";
  const sft = r.sft?.avg ?? null, final = r.final?.avg ?? null;
  const from = reference === "sft" ? sft : r.base?.avg ?? null;
  const gapPoints = from !== null && final !== null ? 100 * (final - from) : null;
  const inTime = r.wallSeconds <= GOAL_MINUTES * 60;
  const finalDepths = depths(r.final);
  const reward = (e?: EvalResult) => e?.meanReward ?? null;
  const clears = learner !== "rl" && reference === "sft"
    ? gained(from, final, GOAL_OVER_SFT_POINTS)
    : barOf(task).clears({
      reference,
      from,
      final,
      fromReward: reward(reference === "sft" ? r.sft : r.base),
      finalReward: reward(r.final),
      finalByCategory: finalDepths,
    });
  return {
    config: r.config,
    task,
    learner,
    overrides: r.overrides,
    runDir: r.runDir,
    adapter: r.adapter,
    wallSeconds: r.wallSeconds,
    reference,
    sftSuccess: sft,
    finalSuccess: final,
    baseReward: reward(r.base),
    sftReward: reward(r.sft),
    finalReward: reward(r.final),
    gapPoints,
    testTasks: r.final?.tasks ?? r.sft?.tasks ?? null,
    testSplitTasks: r.final?.splitTasks ?? r.sft?.splitTasks ?? null,
    interrupted: r.interrupted,
    meetsBar: clears === null ? null : inTime && clears,
    phases: r.phases ?? {},
    signal: r.signal ?? null,
    baseSuccess: r.base?.avg ?? null,
    byDepth: {
      base: depths(r.base),
      sft: depths(r.sft),
      final: finalDepths,
      ...(r.trainSplit ? { "final, train split": depths(r.trainSplit) } : {}),
    },
    pass4: r.pass4?.pass ?? null,
    trainSplitSuccess: r.trainSplit?.avg ?? null,
    trainSplitTasks: r.trainSplit?.tasks ?? null,
    trainSplitSize: r.trainSplit?.splitTasks ?? r.trainSplit?.tasks ?? null,
  };
}

/** "on 20 of 100 test tasks", "on all 100 test tasks": the wording of every evaluation line (train/eval.ts). */
function covered(tasks: number, splitTasks: number | null | undefined, split: string): string {
  return coverage({ tasks, split, splitTasks: splitTasks ?? undefined });
}

/** The few lines of the text report. */
export function reportLines(r: TrainBenchReport): string[] {
  const pct = (x: number | null) => (x === null ? "n/a" : `${(100 * x).toFixed(1)}%`);
  const min = r.wallSeconds / 60;
  const fromBase = r.reference === "base";
  const needs = r.learner !== "rl" && !fromBase
    ? `needs +${GOAL_OVER_SFT_POINTS} points over the warm start`
    : barOf(r.task).needs(r.reference);
  const num = (x: number | null) => (x === null ? "n/a" : x.toFixed(3));
  const bar = r.meetsBar === null
    ? "n/a (needs both evaluations)"
    : `${r.meetsBar ? "yes" : "no"} (${needs}, within ${GOAL_MINUTES} min)`;
  const after = r.learner === "rl" ? "RL" : r.learner;
  const steps = fromBase
    ? `${pct(r.baseSuccess)} base, ${pct(r.finalSuccess)} after ${after} (no warm start)`
    : r.learner === "rl"
    ? `${pct(r.baseSuccess)} base, ${pct(r.sftSuccess)} after SFT, ${pct(r.finalSuccess)} final`
    : `${pct(r.baseSuccess)} base, ${pct(r.sftSuccess)} after SFT, ${pct(r.finalSuccess)} after ${after}`;
  return [
    `bench train: ${r.config}${r.overrides.length ? ` with ${r.overrides.join(" ")}` : ""} on ${r.adapter}`,
    `  wall time        ${min.toFixed(1)} min (${r.wallSeconds.toFixed(0)} s)${r.interrupted ? ", interrupted" : ""}`,
    `  test success     ${steps}` +
    `${r.testTasks === null ? "" : ` (${covered(r.testTasks, r.testSplitTasks, "test")}, greedy Avg@1)`}; Pass@4 ${
      pct(r.pass4)
    }`,
    `  mean reward      ${
      fromBase
        ? `${num(r.baseReward)} base, ${num(r.finalReward)} after ${after}`
        : `${num(r.baseReward)} base, ${num(r.sftReward)} after SFT, ${num(r.finalReward)} final`
    } (each episode's last reward; WebShop's score x 100)`,
    ...(r.trainSplitSuccess === null || r.trainSplitTasks === null ? [] : [
      `  train split      ${pct(r.trainSplitSuccess)} final (${
        covered(r.trainSplitTasks, r.trainSplitSize, "train")
      }, greedy Avg@1: the prompts RL saw, beside the test's)`,
    ]),
    ...Object.entries(r.byDepth).filter(([, d]) => Object.keys(d).length > 0).map(([k, d]) =>
      `  by depth (${k})${" ".repeat(Math.max(1, 6 - k.length))}${
        Object.entries(d).map(([c, x]) => `${c} ${pct(x)}`).join(", ")
      }`
    ),
    `  gap              ${
      r.gapPoints === null
        ? "n/a"
        : `${r.gapPoints >= 0 ? "+" : ""}${r.gapPoints.toFixed(1)} points${fromBase ? " over the base" : ""}`
    }`,
    `  meets the bar    ${bar}`,
    `  ${r.learner === "rl" ? "RL time     " : "rounds' time"}     ${
      Object.entries(r.phases).map(([k, x]) => `${k} ${x.toFixed(1)} s`).join(", ") || "n/a"
    }${r.learner === "rl" ? " (the rollout is prefill + decode + environment)" : ""}`,
    `  GRPO signal      ${
      r.signal === null ? "n/a" : `${(100 * r.signal).toFixed(0)}% of groups per step differ in reward`
    }`,
    `  run folder       ${r.runDir}`,
  ];
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
