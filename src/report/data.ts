/**
 * What report.html draws, read from run folders: every metrics and evals line, a capped choice of episodes with
 * their category and label, and a notice for each line that could not be used. A line cut by a crash mid-write, or
 * one that holds a non-finite number (JSON has none, so `NaN` or `Infinity` written by hand, or `1e999`), is named by
 * file and line number and skipped: the rest of the log still reports.
 */
import { parse } from "yaml";
import { TASKS } from "../../tasks/mod.ts";

/** One logged line (a metrics step, an evaluation or an episode). */
export type LogLine = Record<string, unknown>;

/** One run's logs as the page reads them. */
export interface RunData {
  /** The run folder's name, the series' label when runs are compared. */
  name: string;
  config: string;
  metrics: LogLine[];
  evals: LogLine[];
  /**
   * Episodes without their full conversation text; `category` added (TextCraft: depth, BFCL: the entry's), "" when
   * unknown, and `label` where the task names its tasks (BFCL: the entry's id).
   */
  episodes: LogLine[];
  /** Episodes in rollouts.jsonl, and by phase those not in `episodes` (the page caps what it embeds). */
  episodesLogged?: number;
  episodesLeftOut?: Record<string, number>;
}

/** A JSONL file's usable lines, and a notice for each line skipped. */
export interface JsonlRead {
  lines: LogLine[];
  notices: string[];
}

/** Episodes kept per evaluation shown (the first and the last) and of the latest RL steps. */
const EPISODES_PER_PART = 300;

function finite(v: unknown): boolean {
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(finite);
  if (v !== null && typeof v === "object") return Object.values(v).every(finite);
  return true;
}

/**
 * Parses JSONL text; `name` is how notices call the file. Blank lines are skipped silently.
 *
 * @example
 * ```ts
 * parseJsonl('{"step":1}\n{"step":2,"kl":NaN}\n', "metrics.jsonl");
 * // { lines: [{ step: 1 }], notices: ["metrics.jsonl line 2 holds a non-finite number (NaN or Infinity), ..."] }
 * ```
 */
export function parseJsonl(text: string, name: string): JsonlRead {
  const lines: LogLine[] = [], notices: string[] = [];
  const rows = text.split("\n");
  rows.forEach((row, i) => {
    if (!row.trim()) return;
    const at = `${name} line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(row);
    } catch {
      const cut = i === rows.length - 1;
      const why = /\b(NaN|-?Infinity)\b/.test(row)
        ? "holds a non-finite number (NaN or Infinity), which JSON cannot hold"
        : cut
        ? "is cut off mid-line (the run was stopped while writing it?)"
        : "is not valid JSON";
      notices.push(`${at} ${why}; skipped`);
      return;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      notices.push(`${at} is not a JSON object; skipped`);
    } else if (!finite(value)) {
      notices.push(`${at} holds a non-finite number (a value beyond float64); skipped`);
    } else lines.push(value as LogLine);
  });
  return { lines, notices };
}

async function readJsonl(path: string): Promise<JsonlRead> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { lines: [], notices: [] };
    return { lines: [], notices: [`${path} could not be read (${(e as Error).message}); left out`] };
  }
  return parseJsonl(text, path);
}

/**
 * An episode's category and label: the category from the evaluations' per-task lines, else the task's hooks, which
 * read the labels the episode's server gave at reset (its logged `info`: BFCL's entry id and category), else go by
 * the index.
 */
function labeller(config: string, evals: LogLine[]): (e: LogLine) => { category: string; label?: string } {
  const byPhase = new Map<string, string>();
  for (const ev of evals) {
    for (const t of (ev.perTask ?? []) as { task: number; category: string }[]) {
      byPhase.set(`eval-${ev.phase}:${t.task}`, t.category);
    }
  }
  let taskName: unknown;
  try {
    taskName = (parse(config) as Record<string, unknown> | null)?.task;
  } catch {
    taskName = undefined; // an unreadable config.yaml only costs the training episodes their category
  }
  const task = typeof taskName === "string" && Object.hasOwn(TASKS, taskName) ? TASKS[taskName] : undefined;
  return (e) => {
    const known = byPhase.get(`${e.phase}:${e.task}`);
    // Pretraining evaluates synthetic tasks whose indices are not the task's own: only their eval lines know them.
    if (e.phase === "eval-pretrain" || typeof e.task !== "number") return { category: known ?? "" };
    const info = e.info !== null && typeof e.info === "object" && !Array.isArray(e.info)
      ? e.info as Record<string, unknown>
      : undefined;
    const label = task?.label?.(e.task, info);
    return { category: known ?? task?.category?.(e.task, info) ?? "", ...(label ? { label } : {}) };
  };
}

/**
 * Episodes shown: the first and the last evaluation's, then the latest RL steps' or exploration rounds' (each part
 * capped at EPISODES_PER_PART). The page counts the rest by phase, so its totals match the log.
 */
function chooseEpisodes(all: LogLine[]): LogLine[] {
  const evalKeys = [
    ...new Set(all.filter((e) => String(e.phase).startsWith("eval")).map((e) => `${e.phase}@${e.step}`)),
  ];
  const keys = new Set([evalKeys[0], evalKeys[evalKeys.length - 1]]);
  const ofEval = (k: string | undefined) => all.filter((e) => `${e.phase}@${e.step}` === k).slice(0, EPISODES_PER_PART);
  const trained = all.filter((e) => e.phase === "rl" || e.phase === "explore");
  return [...[...keys].flatMap(ofEval), ...trained.slice(-EPISODES_PER_PART)];
}

/** Reads a run folder's logs; notices name every line skipped. A missing file is an empty log. */
export async function readRun(runDir: string): Promise<{ run: RunData; notices: string[] }> {
  const dir = runDir.replace(/\/+$/, "") || runDir;
  const config = await Deno.readTextFile(`${dir}/config.yaml`).catch(() => "");
  const [metrics, evals, rollouts] = await Promise.all(
    ["metrics", "evals", "rollouts"].map((f) => readJsonl(`${dir}/${f}.jsonl`)),
  );
  const labels = labeller(config, evals.lines);
  const chosen = chooseEpisodes(rollouts.lines);
  const kept = new Set(chosen);
  const episodesLeftOut: Record<string, number> = {};
  for (const e of rollouts.lines) {
    if (!kept.has(e)) episodesLeftOut[String(e.phase)] = (episodesLeftOut[String(e.phase)] ?? 0) + 1;
  }
  const episodes = chosen.map(({ conversation: _c, ...rest }) => ({ ...rest, ...labels(rest) }));
  return {
    run: {
      name: dir.split("/").pop() || dir,
      config,
      metrics: metrics.lines,
      evals: evals.lines,
      episodes,
      episodesLogged: rollouts.lines.length,
      episodesLeftOut,
    },
    notices: [...metrics.notices, ...evals.notices, ...rollouts.notices],
  };
}
