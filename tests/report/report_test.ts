// The report's data: bad JSONL lines named by file and line and skipped, episodes with their category, and a page
// whose embedded data no logged text can break out of. No browser here (report_page_test.ts opens the pages).
import assert from "node:assert/strict";
import { parseJsonl, readRun } from "../../src/report/data.ts";
import { renderReport } from "../../src/report/write.ts";
import { writeTrainRun } from "./report_fixture.ts";

Deno.test("parseJsonl keeps good lines and names each bad one by file and line", () => {
  const text = [
    '{"phase":"rl","step":1,"kl":0.1}',
    "",
    '{"phase":"rl","step":2,"kl":NaN}',
    '{"phase":"rl","step":3,"kl":-Infinity}',
    '{"phase":"rl","step":4,"kl":1e999}',
    "[1, 2]",
    "{oops",
    '{"phase":"rl","step":5,"kl":0.2}',
    '{"phase":"rl","step":6,"k',
  ].join("\n");
  const { lines, notices } = parseJsonl(text, "run/metrics.jsonl");
  assert.deepEqual(lines.map((l) => l.step), [1, 5]);
  assert.deepEqual(notices, [
    "run/metrics.jsonl line 3 holds a non-finite number (NaN or Infinity), which JSON cannot hold; skipped",
    "run/metrics.jsonl line 4 holds a non-finite number (NaN or Infinity), which JSON cannot hold; skipped",
    "run/metrics.jsonl line 5 holds a non-finite number (a value beyond float64); skipped",
    "run/metrics.jsonl line 6 is not a JSON object; skipped",
    "run/metrics.jsonl line 7 is not valid JSON; skipped",
    "run/metrics.jsonl line 9 is cut off mid-line (the run was stopped while writing it?); skipped",
  ]);
});

Deno.test("readRun gives episodes their category, drops conversations, and reads a folder with no logs", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/run`);
  const { run, notices } = await readRun(`${dir}/run/`);
  assert.deepEqual(notices, []);
  assert.equal(run.name, "run");
  assert.equal(run.metrics.length, 17);
  assert.equal(run.evals.length, 3);
  const byTask = (phase: string, task: number) => run.episodes.find((e) => e.phase === phase && e.task === task);
  assert.equal(byTask("eval-final", 3)?.category, "depth 2"); // from the evaluation's per-task lines
  assert.equal(byTask("rl", 448)?.category, "depth 3"); // from TextCraft's own category hook
  assert.ok(run.episodes.every((e) => !("conversation" in e)));

  await Deno.mkdir(`${dir}/empty`);
  const empty = await readRun(`${dir}/empty`);
  assert.deepEqual([empty.run.metrics, empty.run.evals, empty.run.episodes, empty.notices], [[], [], [], []]);
});

Deno.test("renderReport escapes logged text that could close the data script, and shows the notices", () => {
  const html = renderReport({
    title: "t",
    runs: [{
      name: "t",
      config: "a: <b>",
      metrics: [{ phase: "rl", step: 1, note: "</script><b>x" }],
      evals: [],
      episodes: [],
    }],
    notices: ["t/metrics.jsonl line 2 is not valid JSON; skipped"],
  });
  assert.equal(html.match(/<\/script>/g)?.length, 2, "only the page's own two scripts close");
  assert.match(html, /<section id="notices"[^>]*>[\s\S]*t\/metrics\.jsonl line 2 is not valid JSON/);
  assert.match(html, /a: &lt;b&gt;/);
  const data = JSON.parse(/<script id="data" type="application\/json">([\s\S]*?)<\/script>/.exec(html)![1]);
  assert.equal(data.runs[0].metrics[0].note, "</script><b>x");
});
