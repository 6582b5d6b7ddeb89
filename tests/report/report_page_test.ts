// report.html in headless Chromium (tests/browser.ts): no console errors; every chart drawn (one canvas each, its
// series' colour on it, a legend in colour); every logged scalar charted; success pinned to [0, 1]; hover, zoom,
// smoothing and x by wall time; the episode filters; a bad log line named in the page. Screenshots go to
// test-artifacts/report/.
import assert from "node:assert/strict";
import { type Page, screenshot, withBrowser } from "../browser.ts";
import { writeComparison, writeReport } from "../../src/report/write.ts";
import {
  DPO_KEYS,
  RL_KEYS,
  UNIQUE_WORD,
  writePreferenceRun,
  writePretrainRun,
  writeTrainRun,
} from "./report_fixture.ts";

interface ChartSeen {
  title: string;
  group: string;
  keys: string[];
  canvases: number;
  legend: { label: string; colour: string; marker: string; dash: string }[];
  /** Per legend entry, how many canvas pixels are (about) its colour. */
  pixels: number[];
}

/** What each chart on the page shows, read from the DOM and the canvases (page-side code, so a string: no DOM types). */
const READ_CHARTS = `[...document.querySelectorAll("figure.chart")].map((fig) => {
  const canvases = fig.querySelectorAll("canvas");
  const legend = [...fig.querySelectorAll(".u-legend .u-series")].slice(1).map((row) => ({
    label: row.querySelector(".u-label").textContent,
    colour: getComputedStyle(row.querySelector(".u-label")).color,
    marker: getComputedStyle(row.querySelector(".u-marker line")).stroke,
    dash: row.querySelector(".u-marker line").getAttribute("stroke-dasharray") ?? "solid",
  }));
  const c = canvases[0];
  const img = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  const pixels = legend.map((l) => {
    const [r, g, b] = l.colour.match(/\\d+/g).slice(0, 3).map(Number);
    let n = 0;
    for (let i = 0; i < img.length; i += 4) {
      if (img[i + 3] > 200 && Math.abs(img[i] - r) + Math.abs(img[i + 1] - g) + Math.abs(img[i + 2] - b) < 60) n++;
    }
    return n;
  });
  return {
    title: fig.dataset.chart,
    group: fig.closest(".group").dataset.group,
    keys: fig.dataset.keys.split("\\n"),
    canvases: canvases.length,
    legend,
    pixels,
  };
})`;

/** Canvas pixels of chart `i` within a small distance of the first palette colour at 30% over white. */
const faintPixels = (page: Page, i: number) =>
  page.evaluate(`(() => {
    const c = drawn[${i}].u.ctx.canvas, img = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let k = 0; k < img.length; k += 4) {
      if (Math.abs(img[k] - 196) + Math.abs(img[k + 1] - 211) + Math.abs(img[k + 2] - 251) < 12) n++;
    }
    return n;
  })()`) as Promise<number>;

const charts = (page: Page) => page.evaluate(READ_CHARTS) as Promise<ChartSeen[]>;

/**
 * Every chart has one canvas, a legend in saturated colours matching its markers (a line in the series' colour and
 * dash), and its colours drawn.
 */
function assertDrawn(seen: ChartSeen[]): void {
  assert.ok(seen.length > 0, "no chart on the page");
  for (const c of seen) {
    assert.equal(c.canvases, 1, `${c.title}: canvases`);
    assert.ok(c.legend.length > 0 && c.legend.every((l) => l.label.trim() !== ""), `${c.title}: empty legend`);
    for (const l of c.legend) {
      const [r, g, b] = l.colour.match(/\d+/g)!.map(Number);
      assert.ok(Math.max(r, g, b) - Math.min(r, g, b) > 60, `${c.title}: legend "${l.label}" is grey (${l.colour})`);
      assert.equal(l.marker, l.colour, `${c.title}: legend "${l.label}" marker and label differ`);
    }
    assert.ok(c.pixels.some((n) => n > 0), `${c.title}: no series colour drawn on the canvas`);
  }
}

const listed = (page: Page) => page.locator("#episode-list option").allTextContents();

/** Opens a report, screenshots it as `shot`, checks it raised no error and drew every chart, then runs `more`. */
async function checkReport(path: string, shot: string, more: (page: Page, seen: ChartSeen[]) => Promise<void>) {
  await withBrowser(async (open) => {
    const { page, errors } = await open(`file://${path}`);
    const seen = await charts(page);
    await screenshot(page, shot);
    assert.deepEqual(errors, []);
    assertDrawn(seen);
    await more(page, seen);
  });
}

Deno.test("a training run's report draws every scalar, and its controls and episode filters work", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/run`);
  await writeReport(`${dir}/run`);
  await checkReport(`${dir}/run/report.html`, "report/train", async (page, seen) => {
    assert.deepEqual(
      [...new Set(seen.map((c) => c.group))],
      [
        "Rewards and success",
        "Losses, KL and entropy",
        "Clip fractions and gradient norm",
        "Lengths and rounds",
        "Throughput",
        "Time per phase",
        "Credit for each turn (GiGPO)",
        "Environment failures",
        "Cluster (train --cluster)",
        "Other",
      ],
    );
    // The learner's refusals: one series per reason the run logged, read from the run, not from a list in the page.
    assert.deepEqual(
      seen.find((c) => c.title === "Group messages refused by the learner, by reason")?.legend.map((l) => l.label),
      ["all", "schema", "reward"],
    );
    // The phase timings under their own heading, the rollout's split beside the step's phases.
    assert.deepEqual(seen.filter((c) => c.group === "Time per phase").map((c) => c.title), [
      "RL step phases (s)",
      "Rollout split (s)",
    ]);
    // Charts whose every point has one value are listed, not drawn: the evaluations' samples, the signal share.
    const constants = await page.evaluate(
      `[...document.querySelectorAll("#constants li")].map((li) => [li.textContent, li.dataset.keys])`,
    ) as [string, string][];
    assert.ok(constants.some(([t]) => t === "evaluation (test): samples: 1"), `${constants}`);
    assert.ok(constants.some(([t]) => t === "Groups with a learning signal (share): 0.5"), `${constants}`);
    assert.ok(!seen.some((c) => c.title.includes("samples")), "a constant chart was drawn");
    const keys = new Set([...seen.flatMap((c) => c.keys), ...constants.flatMap(([, k]) => k.split("\n"))]);
    const expected = [
      ...RL_KEYS.map((k) => `metrics rl ${k}`),
      ...["epoch", "loss", "tokens", "targets", "gradNorm", "lr", "applied"].map((k) => `metrics sft ${k}`),
      ...["avg", "pass", "meanReward", "samples", "envFailures", "tasks", "episodes"].map((k) => `evals final ${k}`),
      "evals final byCategory.depth 2.avg",
    ];
    assert.deepEqual(expected.filter((k) => !keys.has(k)), [], "logged scalars not charted");
    assert.ok(seen.some((c) => c.group === "Other" && c.title === "rl: mystery_metric"));

    const success = seen.findIndex((c) => c.title.startsWith("Success rate"));
    assert.deepEqual(await page.evaluate(`[drawn[${success}].u.scales.y.min, drawn[${success}].u.scales.y.max]`), [
      0,
      1,
    ]);

    // An evaluations-only chart spans the training steps too (SFT and RL steps 1-12; evaluations at 0, 6 and 12).
    const byCategory = seen.findIndex((c) => c.title === "Test success by category");
    assert.deepEqual(await page.evaluate(`drawn[${byCategory}].u.data[0]`), [0, 1, 6, 12]);

    // Hover shows values in the legend; dragging zooms the x axis.
    const over = page.locator("figure.chart .u-over").nth(success);
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    const values = await page.locator("figure.chart").nth(success).locator(".u-legend .u-value").allTextContents();
    assert.ok(values.slice(1).some((v) => v !== "–" && v !== ""), `hover values: ${values}`);
    const xRange = () => page.evaluate(`[drawn[${success}].u.scales.x.min, drawn[${success}].u.scales.x.max]`);
    const before = (await xRange()) as number[];
    await page.mouse.move(box.x + box.width * 0.3, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.7, box.y + 20, { steps: 5 });
    await page.mouse.up();
    const after = (await xRange()) as number[];
    assert.ok(after[0] > before[0] && after[1] < before[1], `zoom: ${before} -> ${after}`);

    // Smoothing changes a moving curve; wall time puts minutes on x.
    const reward = seen.findIndex((c) => c.title === "Reward");
    const raw = await page.evaluate(`drawn[${reward}].u.data[1]`);
    const faintBefore = await faintPixels(page, reward);
    await page.locator("#smoothing").fill("0.8");
    assert.notDeepEqual(await page.evaluate(`drawn[${reward}].u.data[1]`), raw);
    // The raw points stay drawn, faint (30% of the series' colour over white), under the smoothed curve.
    assert.equal(await page.evaluate(`drawn[${reward}].raw`), 3);
    const faintAfter = await faintPixels(page, reward);
    assert.ok(faintAfter > faintBefore + 30, `faint pixels ${faintBefore} -> ${faintAfter}`);
    await page.locator("#smoothing").fill("0");
    assert.equal(await page.evaluate(`drawn[${reward}].raw`), 0);
    await page.locator("#smoothing").fill("0.8");
    await page.locator('input[name="x-axis"][value="time"]').check();
    assert.equal(await page.evaluate(`drawn[${reward}].u.axes[0].label`), "minutes since start");
    const policyLoss = seen.findIndex((c) => c.title === "Policy loss");
    assert.deepEqual(await page.evaluate(`drawn[${policyLoss}].u.data[0].slice(0, 2)`), [1.5, 2]);
    // Step 4 logged no policy loss: no point there, not a 0 (x by wall time: step 4 is at minute 3).
    assert.ok(!(await page.evaluate(`drawn[${policyLoss}].u.data[0]`) as number[]).includes(3));
    assertDrawn(await charts(page));
    await screenshot(page, "report/train-smoothed-wall-time");

    // The episode filters.
    const all = await listed(page);
    assert.equal(all.length, 14);
    await page.selectOption("#f-success", "solved");
    const solved = await listed(page);
    assert.ok(solved.length > 0 && solved.length < all.length && solved.every((t) => t.startsWith("✓")), `${solved}`);
    await page.selectOption("#f-success", "");
    await page.selectOption("#f-category", "depth 2");
    const deep = await listed(page);
    assert.ok(deep.length > 0 && deep.every((t) => t.includes("depth 2")), `${deep}`);
    await page.selectOption("#f-category", "*");
    await page.selectOption("#f-step", "rl step 12");
    assert.deepEqual((await listed(page)).map((t) => t.slice(2, 12)), ["rl step 12", "rl step 12", "rl step 12"]);
    await page.selectOption("#f-step", "");
    await page.locator("#f-task").fill("448");
    assert.equal((await listed(page)).length, 2);
    await page.locator("#f-task").fill("");
    await page.locator("#f-search").fill(UNIQUE_WORD);
    assert.deepEqual(await listed(page), ["✓ eval-final step 12 task 2 depth 2 (2 rounds)"]);
    assert.match(await page.locator("#episode").innerText(), /turn 2 · reward 1[\s\S]*zebrawood/);
    assert.match(
      await page.locator("#episode-count").innerText(),
      /^1 of 14 episodes; the log holds 18, not loaded: 4 eval-rl \(the page keeps the first and last evaluation/,
    );
    await screenshot(page, "report/train-episode-search");
  });
});

Deno.test("a log with a NaN line and a truncated last line still reports, naming both lines", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/run`);
  const path = `${dir}/run/metrics.jsonl`;
  const lines = (await Deno.readTextFile(path)).trim().split("\n");
  lines[7] = lines[7].replace(/"kl":[^,]+/, '"kl":NaN');
  const cut = lines.join("\n") + '\n{"phase":"rl","step":13,"reward_m';
  await Deno.writeTextFile(path, cut);
  await writeReport(`${dir}/run`);
  await checkReport(`${dir}/run/report.html`, "report/bad-input", async (page) => {
    const notice = page.locator("#notices");
    assert.ok(await notice.isVisible());
    const text = await notice.innerText();
    assert.match(text, /2 log lines skipped/);
    assert.match(text, new RegExp(`${path} line 8 holds a non-finite number`));
    assert.match(text, new RegExp(`${path} line 18 is cut off mid-line`));
  });
});

Deno.test("a pretraining run's report charts losses, held-out success and copy accuracy", async () => {
  const dir = await Deno.makeTempDir();
  await writePretrainRun(`${dir}/pre`);
  await writeReport(`${dir}/pre`);
  await checkReport(`${dir}/pre/report.html`, "report/pretrain", async (page, seen) => {
    const titles = seen.filter((c) => c.group === "Pretraining").map((c) => c.title);
    for (
      const t of ["Pretraining loss", "Held-out success", "Held-out success by category", "Copy accuracy (held-out)"]
    ) {
      assert.ok(titles.includes(t), `missing chart ${t}`);
    }
    const copy = seen.findIndex((c) => c.title === "Copy accuracy (held-out)");
    assert.deepEqual(await page.evaluate(`[drawn[${copy}].u.scales.y.min, drawn[${copy}].u.scales.y.max]`), [0, 1]);
    assert.match(await page.locator("#summary").innerText(), /Held-out success at step 20: 50\.0%/);
  });
});

Deno.test("a run that learned in rounds charts DPO's metrics and the rounds' exploration, nothing under Other", async () => {
  const dir = await Deno.makeTempDir();
  await writePreferenceRun(`${dir}/eto`);
  await writeReport(`${dir}/eto`);
  await checkReport(`${dir}/eto/report.html`, "report/preference", async (page, seen) => {
    const titles = seen.filter((c) => c.group === "Preference learning (DPO, ETO, AgentEvol)").map((c) => c.title);
    for (
      const t of [
        "DPO implicit rewards",
        "DPO reward accuracy",
        "DPO loss",
        "Exploration success per round (train tasks)",
      ]
    ) {
      assert.ok(titles.includes(t), `missing chart ${t}: ${titles}`);
    }
    assert.deepEqual(seen.find((c) => c.title === "DPO implicit rewards")?.legend.map((l) => l.label), [
      "chosen",
      "rejected",
      "margin",
    ]);
    const acc = seen.findIndex((c) => c.title === "DPO reward accuracy");
    assert.deepEqual(await page.evaluate(`[drawn[${acc}].u.scales.y.min, drawn[${acc}].u.scales.y.max]`), [0, 1]);
    const keys = new Set(seen.flatMap((c) => c.keys));
    for (const k of ["loss", "rewards/chosen", "rewards/rejected", "rewards/accuracies", "rewards/margins"]) {
      assert.ok(keys.has(`metrics dpo ${k}`), `metrics dpo ${k} not charted`);
    }
    const named = ["logps/chosen", "logps/rejected", "gradNorm", "lr"].map((k) => `metrics dpo ${k}`);
    assert.deepEqual(named.filter((k) => !keys.has(k)), []);
    assert.ok(DPO_KEYS.length > named.length);
    assert.ok(keys.has("metrics agentevol loss") && keys.has("metrics agentevol_round kept"));
  });
});

Deno.test("a comparison overlays runs: one series per run in each chart, episodes filtered by run", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/a`);
  await writeTrainRun(`${dir}/b`, 0.3);
  await writeComparison([`${dir}/a`, `${dir}/b`], `${dir}/compare.html`);
  await checkReport(`${dir}/compare.html`, "report/compare", async (page, seen) => {
    for (const c of seen) {
      const runs = new Set(c.legend.map((l) => l.label.split(":")[0]));
      assert.deepEqual([...runs].sort(), ["a", "b"], `${c.title}: ${c.legend.map((l) => l.label)}`);
    }
    // The legend shows both: the run by colour, the metric by dash; every entry a different pair.
    const clip = seen.find((c) => c.title === "Clip fractions")!;
    const entry = (label: string) => clip.legend.find((l) => l.label === label)!;
    const [a1, a2, b1, b2] = ["a: pg_clipfrac", "a: pg_clipfrac_lower", "b: pg_clipfrac", "b: pg_clipfrac_lower"]
      .map(entry);
    assert.equal(a1.colour, a2.colour);
    assert.equal(b1.colour, b2.colour);
    assert.notEqual(a1.colour, b1.colour);
    assert.deepEqual([a1.dash, b1.dash], ["solid", "solid"]);
    assert.deepEqual([a2.dash, b2.dash], ["7 4", "7 4"]);
    const key = await page.locator("#run-key").innerText();
    assert.match(key, /a[\s\S]*b[\s\S]*colour: run; dash: the metric/);
    await page.selectOption("#f-run", "1");
    const b = await listed(page);
    assert.ok(b.length === 14 && b.every((t) => t.slice(2).startsWith("b ")), `${b}`);
  });
});
