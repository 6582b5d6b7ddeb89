// The main job end to end on a minimal budget, as a user runs it (a subprocess): the run folder, the metrics, the
// report's data and its charts rendered in headless Chromium; the bundle run from another folder; and clear errors
// with a non-zero exit for bad configs, unreachable servers and model folders that do not load.
import assert from "node:assert/strict";
import { CHROMIUM_FLAGS, chromiumPath } from "../browser.ts";
import { noGpu } from "../no_gpu.ts";
import { SMOKE_MODEL_YAML, smokeArgs } from "../../bench/smoke_run.ts";
import { runDeno } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

const run = (args: string[], cwd = ROOT) => runDeno(args, { cwd });

function budget(dir: string): string[] {
  return smokeArgs(`${dir}/tiny.yaml`, [
    "sft.epochs=0.01",
    "sft.batch_tokens=2048",
    "trainer.total_steps=2",
    "trainer.test_freq=1",
  ]);
}

Deno.test({
  name: "deno task train on a minimal budget writes the run folder, metrics and a report whose charts render",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const runDir = `${dir}/run`;
    const r = await run(["run", "-A", "src/cli/main.ts", "train", "textcraft", "--run-dir", runDir, ...budget(dir)]);
    assert.equal(r.code, 0, r.err + r.out);
    assert.match(
      r.out,
      /Test success: [\d.]+% \(on 2 of \d+ test tasks\) after SFT, [\d.]+% \(on 2 of \d+ test tasks\) after RL/,
    );
    const lines = (f: string) => Deno.readTextFileSync(`${runDir}/${f}`).trim().split("\n").map((l) => JSON.parse(l));
    const metrics = lines("metrics.jsonl");
    const rl = metrics.filter((m) => m.phase === "rl");
    assert.deepEqual(rl.map((m) => m.step), [1, 2]);
    for (const key of ["reward_mean", "success_rate", "tokens_per_s"]) assert.equal(typeof rl[0][key], "number", key);
    // Policy numbers only where the update computed them (textcraft.yaml has no KL or entropy term, so a step whose
    // groups all had equal rewards computes none); KL never, without a reference policy.
    for (const m of rl) {
      const computed = m.groups_with_signal > 0;
      for (const key of ["policy_loss", "entropy", "grad_norm"]) {
        assert.equal(key in m, computed, `step ${m.step} ${key}`);
      }
      assert.ok(!("kl" in m), `step ${m.step} logs kl ${m.kl} without a reference policy`);
    }
    assert.ok(metrics.some((m) => m.phase === "sft" && typeof m.loss === "number"));
    assert.deepEqual(lines("evals.jsonl").map((e) => e.phase), ["sft", "rl", "final"]);
    assert.ok(lines("rollouts.jsonl").every((e) => Array.isArray(e.turns) && "reward" in e));
    const latest = Deno.readTextFileSync(`${runDir}/checkpoints/latest`).trim();
    for (const f of ["config.json", "model.safetensors", "tokenizer.json", "trainer_state.json"]) {
      await Deno.stat(`${runDir}/checkpoints/${latest}/${f}`);
    }
    const html = Deno.readTextFileSync(`${runDir}/report.html`);
    const data = JSON.parse(/<script id="data" type="application\/json">([\s\S]*?)<\/script>/.exec(html)![1]);
    assert.equal(data.runs[0].metrics.length, metrics.length);
    assert.ok(data.runs[0].episodes.length > 0);
    const dom = await new Deno.Command(chromiumPath(), {
      args: [
        "--headless",
        ...CHROMIUM_FLAGS,
        `--user-data-dir=${dir}/chrome`,
        "--virtual-time-budget=5000",
        "--dump-dom",
        `file://${runDir}/report.html`,
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    const page = new TextDecoder().decode(dom.stdout);
    const charts = page.match(/<figure class="chart"/g) ?? [];
    // Charts drawn, plus those whose every point has one value (listed under "Constant over the run" instead).
    const constant = (page.match(/<li data-keys=/g) ?? []).length;
    assert.ok(
      charts.length >= 4 && charts.length + constant >= 7,
      `charts drawn: ${charts.length}, constant ${constant}`,
    );
    assert.equal((page.match(/<canvas/g) ?? []).length, charts.length, "one canvas per chart");
    const coloured = page.match(/class="u-label" style="color: rgb\(/g) ?? [];
    assert.ok(coloured.length >= charts.length, `legend entries in colour: ${coloured.length}`);
    assert.match(page, /id="eval-table"/);
    assert.match(page, /<option value="0">/);
  },
});

Deno.test({
  name: "the bundle runs from another folder, and bad configs, dead servers and bad model folders fail clearly",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const b = await run(["run", "-A", "src/cli/build.ts", "bundle"]);
    assert.equal(b.code, 0, b.err);
    await Deno.copyFile(`${ROOT}dist/crucible.js`, `${dir}/crucible.js`);
    const args = ["run", "-A", `${dir}/crucible.js`, "train", "textcraft", "--run-dir", `${dir}/run`, ...budget(dir)];
    const r = await run([...args, "sft.enabled=false", "trainer.total_steps=1", "trainer.test_freq=0"], dir);
    assert.equal(r.code, 0, r.err + r.out);
    await Deno.stat(`${dir}/run/report.html`);
    const rebuilt = await run(["run", "-A", `${dir}/crucible.js`, "report", "run", "--out", "again.html"], dir);
    assert.equal(rebuilt.code, 0, rebuilt.err);
    assert.match(Deno.readTextFileSync(`${dir}/again.html`), /uPlot \(v1\.6\.32\)/, "uPlot inlined");

    const bad = await run([...args, "actor.lrr=1"], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /unknown config key "actor\.lrr"/);
    // Outside the repository the shipped base model is not there: the error names the key to set.
    const away = await run([...args.slice(0, 5), "--run-dir", `${dir}/away`], dir);
    assert.notEqual(away.code, 0);
    // From another folder the relative path is no directory; as a Hub name it is either unknown or unreachable here.
    assert.match(
      away.err,
      /model\.path: "models\/crucible-base" does not exist as a directory \(.*\/models\/crucible-base\), and as a Hub/,
    );
    const deadArgs = [...args.slice(0, 5), "model.path=null", "--env-url", "http://127.0.0.1:9"];
    const dead = await run([...deadArgs, "--run-dir", `${dir}/dead`], dir);
    assert.notEqual(dead.code, 0);
    assert.match(dead.err, /does not answer/);
    const noModel = await run([...args.slice(0, 5), "--model", `${dir}/missing`, "--run-dir", `${dir}/nomodel`], dir);
    assert.notEqual(noModel.code, 0);
    assert.match(noModel.err, /missing/);
  },
});
