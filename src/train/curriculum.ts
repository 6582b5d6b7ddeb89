/**
 * Staged training in one command, with automatic promotion (EnvTuning's curriculum, which its authors promote by
 * hand). A curriculum file names a base run config and its stages: each stage is a mapping of what it changes over
 * the base and, optionally, a promotion rule. The stages run one after another, each as an ordinary run in its own
 * folder under the curriculum's (`stage1-<name>/`, ...), each after the first starting from the previous stage's last
 * checkpoint with no SFT warm start. A stage is promoted once the mean of an RL step metric over its last `window`
 * steps passes `above` (the run is stopped as a signal stops it, after saving its step's checkpoint), or when its
 * `trainer.total_steps` are done (with its final evaluation). Every stage's start and end (`promotion`, or
 * `stage_end` for the last) is a line on the reporter and a record in `<dir>/metrics.jsonl`; `<dir>/curriculum.json`
 * keeps where the curriculum stands, so a resumed curriculum goes on in the stage it stopped in, from that stage's
 * latest checkpoint.
 *
 * @example
 * ```yaml
 * curriculum:
 *   base: bfcl_single             # a shipped run config or a YAML file
 *   stages:
 *     - name: format
 *       config: { task_options: { rewards: format }, trainer: { total_steps: 40 } }
 *       promote: { metric: reward_mean, above: 1.5, window: 5 }
 *     - name: progress
 *       config: { task_options: { rewards: progress }, trainer: { total_steps: 60 } }
 * ```
 */
import { stringify } from "yaml";
import { z } from "zod";
import { type ConfigSource, parseYaml, resolveConfig } from "../config/load.ts";
import { configSource } from "../config/presets.ts";
import type { RunConfig } from "../config/schema.ts";
import type { EvalResult } from "./eval.ts";
import { runTraining } from "./run.ts";
import type { Reporter } from "./types.ts";

/** The step metrics a promotion rule may watch (see stepMetrics). */
export const PROMOTION_METRICS = ["reward_mean", "success_rate"] as const;

const Promote = z.strictObject({
  /** The RL step metric whose windowed mean is compared. */
  metric: z.enum(PROMOTION_METRICS).default("reward_mean"),
  /** Promote once the mean is strictly above this. */
  above: z.number(),
  /** How many of the stage's latest RL steps (those that measured the metric) the mean is over. */
  window: z.number().int().min(1).default(5),
});

const Stage = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_-]+$/, "a stage name is letters, digits, _ and -"),
  /** What the stage changes over the base config (a run-config mapping, merged key by key). */
  config: z.record(z.string(), z.unknown()).default({}),
  /** Without a rule the stage runs its trainer.total_steps. */
  promote: Promote.optional(),
});

const Curriculum = z.strictObject({
  curriculum: z.strictObject({
    /** A shipped config's name or a YAML file: what every stage starts from. */
    base: z.string().min(1),
    stages: z.array(Stage).min(1),
  }),
});

/** A curriculum file, checked. */
export type CurriculumSpec = z.infer<typeof Curriculum>["curriculum"];

/** Whether a config file is a curriculum (a top-level `curriculum` key) rather than a run config. */
export function isCurriculum(src: ConfigSource): boolean {
  return Object.hasOwn(parseYaml(src), "curriculum");
}

/** Reads and checks a curriculum file; errors name the file and the key. */
export function parseCurriculum(src: ConfigSource): CurriculumSpec {
  const r = Curriculum.safeParse(parseYaml(src));
  if (r.success) return r.data.curriculum;
  const issue = r.error.issues[0];
  const key = issue.path.join(".") || "(top level)";
  const keys = issue.code === "unrecognized_keys" ? ` (unknown: ${issue.keys.join(", ")})` : "";
  throw new TypeError(`${src.name}: curriculum key "${key}": ${issue.message}${keys}`);
}

/**
 * A curriculum's stage configs: stage i's is the base merged with the stage's mapping, then `overrides`, then (after
 * the first) the previous stage's checkpoint as `model.path` and no SFT. Every stage's config is checked here, before
 * the first one trains (later ones with a stand-in checkpoint path).
 */
export async function curriculumConfigs(
  source: ConfigSource,
  overrides: readonly string[],
  onNote?: (note: string) => void,
): Promise<{ spec: CurriculumSpec; stageConfig(i: number, from: string | undefined): RunConfig }> {
  const spec = parseCurriculum(source);
  const baseSource = await configSource(spec.base);
  if (isCurriculum(baseSource)) {
    throw new RangeError(
      `${source.name}: curriculum.base "${spec.base}" is itself a curriculum; name a run config (e.g. bfcl_single)`,
    );
  }
  const base = parseYaml(baseSource);
  const stageConfig = (i: number, from: string | undefined): RunConfig => {
    const raw = merged(base, spec.stages[i].config);
    const chain = from === undefined ? [] : [`model.path=${JSON.stringify(from)}`, "sft.enabled=false"];
    const name = `${source.name} stage ${i + 1} (${spec.stages[i].name})`;
    return resolveConfig({ text: stringify(raw), name }, [...overrides, ...chain], { onNote });
  };
  spec.stages.forEach((_, i) => stageConfig(i, i === 0 ? undefined : "<previous stage's checkpoint>"));
  return { spec, stageConfig };
}

/** Where one stage stands, as curriculum.json keeps it. */
export interface StageRecord {
  name: string;
  /** The stage's run folder. */
  dir: string;
  status: "running" | "promoted" | "completed";
  /** The checkpoint the next stage starts from (set once promoted or completed). */
  checkpoint?: string;
  /** The RL step it ended at. */
  step?: number;
  reason?: string;
}

interface CurriculumState {
  version: 1;
  /** The command line's overrides, applied to every stage (again on resume). */
  overrides: string[];
  stages: StageRecord[];
}

/** Options of {@linkcode runCurriculum}. */
export interface CurriculumOptions {
  /** The curriculum file (on resume: `<dir>/curriculum.yaml`). */
  source: ConfigSource;
  /** `key.path=value` overrides for every stage, applied before the curriculum's own chaining. */
  overrides: readonly string[];
  dir: string;
  resume: boolean;
  reporter: Reporter;
  stopRequested: () => boolean;
  freshOptimizer?: boolean;
  onNote?: (note: string) => void;
}

/** What a curriculum reports at the end. */
export interface CurriculumSummary {
  dir: string;
  interrupted: boolean;
  stages: StageRecord[];
  /** The last stage's final evaluation, when it ran one. */
  finalEval?: EvalResult;
  seconds: number;
  lastCheckpoint?: string;
}

/** Runs (or resumes) a curriculum's stages in order. */
export async function runCurriculum(o: CurriculumOptions): Promise<CurriculumSummary> {
  const start = performance.now();
  const statePath = `${o.dir}/curriculum.json`;
  const state: CurriculumState = o.resume
    ? await readState(statePath)
    : { version: 1, overrides: [...o.overrides], stages: [] };
  const overrides = o.resume ? [...state.overrides, ...o.overrides] : [...o.overrides];
  state.overrides = overrides;
  const { spec, stageConfig } = await curriculumConfigs(o.source, overrides, o.onNote);
  if (!o.resume) {
    await Deno.mkdir(o.dir, { recursive: true });
    await Deno.writeTextFile(`${o.dir}/curriculum.yaml`, o.source.text);
  }
  const save = () => Deno.writeTextFile(statePath, JSON.stringify(state, null, 2) + "\n");
  const event = (record: Record<string, unknown>) =>
    Deno.writeTextFile(`${o.dir}/metrics.jsonl`, JSON.stringify({ time: new Date().toISOString(), ...record }) + "\n", {
      append: true,
    });
  const n = spec.stages.length;
  let from: string | undefined;
  let last: Awaited<ReturnType<typeof runTraining>> | undefined;
  for (let i = 0; i < n; i++) {
    const stage = spec.stages[i];
    const rec = state.stages[i];
    if (rec && rec.status !== "running") {
      from = rec.checkpoint;
      continue;
    }
    const dir = `${o.dir}/stage${i + 1}-${stage.name}`;
    const resume = rec?.status === "running" && await exists(`${dir}/config.yaml`);
    const config = resume ? resolveConfig({ text: await Deno.readTextFile(`${dir}/config.yaml`), name: dir }) : (
      stageConfig(i, from)
    );
    if (!rec) {
      state.stages[i] = { name: stage.name, dir, status: "running" };
      await save();
      const steps = `${config.trainer.total_steps} RL step${config.trainer.total_steps === 1 ? "" : "s"}`;
      const end = i + 1 < n ? "promoted" : "ends";
      const rule = stage.promote
        ? `${end} when ${stage.promote.metric} over ${stage.promote.window} RL steps > ${stage.promote.above}, ` +
          `else after ${steps}`
        : `${end} after ${steps}`;
      o.reporter.line(
        `Curriculum: stage ${i + 1}/${n} ${stage.name} from ${config.model.path ?? "the config's model"}; ${rule}`,
      );
      await event({ event: "stage_start", stage: i + 1, name: stage.name, from: config.model.path, dir });
    } else {
      o.reporter.line(`Curriculum: resuming stage ${i + 1}/${n} ${stage.name} in ${dir}`);
    }
    const watch = stage.promote && promotionWatch(dir, stage.promote);
    last = await runTraining({
      config,
      runDir: dir,
      resume,
      reporter: o.reporter,
      stopRequested: () => o.stopRequested() || (watch?.reached() ?? false),
      freshOptimizer: o.freshOptimizer,
    });
    const promoted = last.interrupted && !o.stopRequested() ? watch?.result : undefined;
    if (last.interrupted && !promoted) return summary(true);
    const step = rlSteps(dir);
    const reason = promoted
      ? `${promoted.metric} over the last ${promoted.window} RL steps ${promoted.value.toFixed(4)} > ${promoted.above}`
      : `trainer.total_steps=${config.trainer.total_steps} done`;
    state.stages[i] = {
      name: stage.name,
      dir,
      status: promoted ? "promoted" : "completed",
      checkpoint: last.lastCheckpoint,
      step,
      reason,
    };
    await save();
    const next = i + 1 < n ? `stage ${i + 2} ${spec.stages[i + 1].name}` : "the end";
    o.reporter.line(`Curriculum: stage ${i + 1} ${stage.name} -> ${next} at RL step ${step}: ${reason}`);
    await event({
      event: i + 1 < n ? "promotion" : "stage_end",
      status: state.stages[i].status,
      stage: i + 1,
      name: stage.name,
      to: i + 1 < n ? spec.stages[i + 1].name : null,
      step,
      reason,
      ...(promoted ?? {}),
      checkpoint: last.lastCheckpoint,
    });
    from = last.lastCheckpoint;
  }
  return summary(false);

  function summary(interrupted: boolean): CurriculumSummary {
    return {
      dir: o.dir,
      interrupted,
      stages: state.stages,
      finalEval: interrupted ? undefined : last?.finalEval,
      seconds: (performance.now() - start) / 1000,
      lastCheckpoint: last?.lastCheckpoint ?? from,
    };
  }
}

/** The windowed metric a promotion compares, once it passed. */
export interface Promotion {
  metric: string;
  window: number;
  above: number;
  value: number;
}

/**
 * Watches a stage's metrics.jsonl (its RL lines only, so SFT never promotes): `reached()` is true once the mean of the
 * metric over the latest `window` steps that measured it is above the threshold. Read on each poll (between steps).
 */
export function promotionWatch(
  runDir: string,
  rule: z.infer<typeof Promote>,
): { reached(): boolean; result?: Promotion } {
  const w = {
    result: undefined as Promotion | undefined,
    reached(): boolean {
      if (w.result) return true;
      const values = rlRecords(runDir).map((r) => r[rule.metric]).filter((v): v is number => typeof v === "number");
      if (values.length < rule.window) return false;
      const value = values.slice(-rule.window).reduce((a, b) => a + b, 0) / rule.window;
      if (value > rule.above) w.result = { metric: rule.metric, window: rule.window, above: rule.above, value };
      return w.result !== undefined;
    },
  };
  return w;
}

function rlRecords(runDir: string): Record<string, unknown>[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(`${runDir}/metrics.jsonl`);
  } catch {
    return [];
  }
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r.phase === "rl");
}

function rlSteps(runDir: string): number {
  return rlRecords(runDir).reduce((m, r) => Math.max(m, typeof r.step === "number" ? r.step : 0), 0);
}

/** `over` merged into `base` key by key: mappings merge, anything else replaces. */
function merged(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    const isMap = (x: unknown): x is Record<string, unknown> =>
      typeof x === "object" && x !== null && !Array.isArray(x);
    out[k] = isMap(b) && isMap(v) ? merged(b, v) : v;
  }
  return out;
}

async function readState(path: string): Promise<CurriculumState> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    throw new Deno.errors.NotFound(`${path} is missing: --resume of a curriculum needs the folder it made`);
  }
  const s = JSON.parse(text) as CurriculumState;
  if (s.version !== 1 || !Array.isArray(s.stages)) throw new SyntaxError(`${path} is not a curriculum's state`);
  return s;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}
