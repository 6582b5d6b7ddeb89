// `deno task report` as a user runs it (a subprocess): help with options and examples, one run's report rebuilt,
// several runs compared into <first>/compare.html, a bad log line named on stderr, and clear errors for a folder
// that is not a run.
import assert from "node:assert/strict";
import { writeTrainRun } from "../report/report_fixture.ts";
import { runCli } from "../subprocess.ts";

const report = (args: string[]) => runCli(["report", ...args]);

Deno.test("deno task report rebuilds one run's report, compares several, and names bad lines", async () => {
  const help = await report(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.out, /--out FILE/);
  assert.match(help.out, /--tensorboard DIR/);
  assert.equal(help.out.match(/^ {2}deno task report /gm)?.length, 3, "three examples");

  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/a`);
  await writeTrainRun(`${dir}/b`, 0.3);
  await Deno.writeTextFile(`${dir}/b/metrics.jsonl`, '{"phase":"rl","step":13,"kl":Infinity}\n', { append: true });
  const one = await report([`${dir}/a/`]);
  assert.equal(one.code, 0, one.err);
  assert.match(one.out, new RegExp(`Wrote ${dir}/a/report.html`));
  assert.match(await Deno.readTextFile(`${dir}/a/report.html`), /<script id="data"/);

  const two = await report([`${dir}/a`, `${dir}/b`]);
  assert.equal(two.code, 0, two.err);
  assert.match(two.out, new RegExp(`Wrote ${dir}/a/compare.html`));
  assert.match(two.err, new RegExp(`warning: ${dir}/b/metrics.jsonl line 18 holds a non-finite number`));
  const html = await Deno.readTextFile(`${dir}/a/compare.html`);
  assert.match(html, /<section id="notices"[\s\S]*b\/metrics\.jsonl line 18/);
  const out = await report([`${dir}/a`, `${dir}/b`, "--out", `${dir}/ab.html`]);
  assert.equal(out.code, 0, out.err);
  await Deno.stat(`${dir}/ab.html`);

  const missing = await report([`${dir}/nope`]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /Run folder ".*\/nope" does not exist/);
  await Deno.mkdir(`${dir}/empty`);
  const empty = await report([`${dir}/empty`]);
  assert.equal(empty.code, 2);
  assert.match(empty.err, /holds no metrics\.jsonl, evals\.jsonl or rollouts\.jsonl/);
  const none = await report([]);
  assert.equal(none.code, 2);
  assert.match(none.err, /needs a run folder/);
});
