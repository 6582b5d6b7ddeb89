/**
 * report.html: one static file that opens from file:// with no server and no network. It embeds the runs' logs as
 * JSON, the uPlot charting library and the page's own script (see assets.ts), and shows every logged scalar
 * charted in groups (x by step or wall time, smoothing, hover values, drag to zoom), the evaluations by category,
 * an episode browser with filters, and each run's config. Several runs give one page that overlays them.
 */
import { type LogLine, readRun, type RunData } from "./data.ts";
import { reportScript, reportStyle } from "./assets.ts";

export type { LogLine, RunData };

/** The data the page draws: one run, or several to compare, and the lines skipped while reading them. */
export interface ReportData {
  title: string;
  runs: RunData[];
  notices: string[];
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** Reads run folders; prints each skipped line on stderr. */
export async function readReportData(runDirs: string[]): Promise<ReportData> {
  const read = await Promise.all(runDirs.map(readRun));
  const notices = read.flatMap((r) => r.notices);
  for (const n of notices) console.error(`warning: ${n}`);
  const runs = read.map((r) => r.run);
  const title = runs.map((r) => r.name).join(", ");
  return { title, runs, notices };
}

/** The page for some data. `</` is escaped inside the embedded JSON so no logged text can close the script. */
export function renderReport(d: ReportData): string {
  const json = JSON.stringify(d).replace(/<\//g, "<\\/").replace(/\u2028|\u2029/g, "");
  const notices = d.notices.length === 0 ? "" : `<section id="notices" class="notice" role="alert">
<strong>${d.notices.length} log line${d.notices.length === 1 ? "" : "s"} skipped</strong><ul>${
    d.notices.map((n) => `<li>${esc(n)}</li>`).join("")
  }</ul></section>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Crucible ${esc(d.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${reportStyle}</style></head>
<body><header><h1>Crucible ${d.runs.length > 1 ? "runs" : "run"} <code>${esc(d.title)}</code></h1>
<div id="summary"></div></header>${notices}
<nav id="controls"><label>Smoothing <input id="smoothing" type="range" min="0" max="0.99" step="0.01" value="0">
<output id="smoothing-value">0</output></label><span role="radiogroup" aria-label="x axis">x:
<label><input type="radio" name="x-axis" value="step" checked> step</label>
<label><input type="radio" name="x-axis" value="time"> wall time</label></span>
<span class="muted">drag on a chart to zoom, double-click to reset; click a legend entry to hide it</span></nav>
<section><h2>Training</h2><div id="charts"></div></section>
<section><h2>Evaluations</h2><div id="evals"></div></section>
<section><h2>Episodes</h2><div id="episode-filters"></div><div id="browser"><select id="episode-list" size="20"
aria-label="episodes"></select><div id="episode"></div></div></section>
<section><h2>Config</h2>${
    d.runs.map((r) => `<details><summary>${esc(r.name)}/config.yaml</summary><pre>${esc(r.config)}</pre></details>`)
      .join("")
  }</section>
<script id="data" type="application/json">${json}</script>
<script>${reportScript}</script></body></html>
`;
}

/**
 * Writes `<runDir>/report.html` from the run's logs and returns its path.
 *
 * @example
 * ```ts
 * const path = await writeReport("runs/textcraft-20250101-120000");
 * ```
 */
export async function writeReport(runDir: string): Promise<string> {
  return await writeComparison([runDir], `${runDir.replace(/\/+$/, "")}/report.html`);
}

/**
 * Writes one report overlaying several runs (one series per run in each chart) to `out`; returns `out`.
 *
 * @example
 * ```ts
 * await writeComparison(["runs/a", "runs/b"], "runs/a/compare.html");
 * ```
 */
export async function writeComparison(runDirs: string[], out: string): Promise<string> {
  if (runDirs.length === 0) throw new RangeError("A report needs at least one run folder, got none");
  await Deno.writeTextFile(out, renderReport(await readReportData(runDirs)));
  return out;
}
