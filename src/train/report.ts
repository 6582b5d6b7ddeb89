/**
 * report.html: one static file that opens without a server. It embeds the run's data as JSON and draws, with a
 * small script and inline SVG: success and reward over steps, policy loss, KL, entropy and rounds, SFT loss,
 * evaluations by category (TextCraft: depth), and an episode browser (each turn's thought, action, observation).
 */
import { reportScript, reportStyle } from "./report_assets.ts";

/** The data the page draws, as read from the run folder. */
export interface ReportData {
  title: string;
  config: string;
  metrics: Record<string, unknown>[];
  evals: Record<string, unknown>[];
  episodes: Record<string, unknown>[];
}

const MAX_EPISODES = 400;

async function readLines(path: string): Promise<Record<string, unknown>[]> {
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return [];
  }
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // A line cut by a crash mid-write is skipped; the rest of the log still reports.
    }
  }
  return out;
}

/** Reads a run folder's logs. Episodes: those of the last evaluation, then the latest training ones, capped. */
export async function readReportData(runDir: string): Promise<ReportData> {
  const config = await Deno.readTextFile(`${runDir}/config.yaml`).catch(() => "");
  const episodes = await readLines(`${runDir}/rollouts.jsonl`);
  const evalPhases = episodes.filter((e) => String(e.phase).startsWith("eval"));
  const lastEval = evalPhases.length ? evalPhases[evalPhases.length - 1].phase : undefined;
  const chosen = [
    ...episodes.filter((e) => e.phase === lastEval),
    ...episodes.filter((e) => e.phase === "rl").slice(-MAX_EPISODES),
  ].slice(0, MAX_EPISODES).map(({ conversation: _c, ...rest }) => rest);
  return {
    title: runDir.split("/").filter(Boolean).pop() ?? runDir,
    config,
    metrics: await readLines(`${runDir}/metrics.jsonl`),
    evals: await readLines(`${runDir}/evals.jsonl`),
    episodes: chosen,
  };
}

/** The page for some data. `</` is escaped inside the embedded JSON so no text can close the script. */
export function renderReport(d: ReportData): string {
  const json = JSON.stringify(d).replace(/<\//g, "<\\/").replace(/\u2028|\u2029/g, "");
  const esc = (s: string) => s.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Crucible run ${esc(d.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${reportStyle}</style></head>
<body><header><h1>Crucible run <code>${esc(d.title)}</code></h1><p id="summary"></p></header>
<section><h2>Training</h2><div class="grid" id="charts"></div></section>
<section><h2>Evaluations</h2><div id="evals"></div></section>
<section><h2>Episodes</h2><div id="browser"><select id="episode-list" size="18"></select><div id="episode"></div></div>
</section>
<section><h2>Config</h2><pre>${esc(d.config)}</pre></section>
<script id="data" type="application/json">${json}</script>
<script>${reportScript}</script></body></html>
`;
}

/** Writes `<runDir>/report.html` and returns its path. */
export async function writeReport(runDir: string): Promise<string> {
  const path = `${runDir}/report.html`;
  await Deno.writeTextFile(path, renderReport(await readReportData(runDir)));
  return path;
}
