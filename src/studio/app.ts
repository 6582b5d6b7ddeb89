/// <reference lib="dom" />
/**
 * The studio page's script (bundled for the browser by `deno task studio`): loads the model folder the server hands
 * out into the page's file tree, checks the browser's WebGPU, and trains with `runTraining`, the function
 * `deno task train` runs, on the page's GPU with TextCraft played in the page. Settings are config keys
 * (settings.ts); charts are the report's (src/report/charts.js); episodes read from the run's rollouts.jsonl.
 * Every failure is shown in the status line as a message, never a stack trace, and leaves the page usable.
 * `document.body.dataset.state` (loading, ready, training, stopped, done, evaluating, failed, error) is for tests;
 * when a command drives the page (`deno task studio --headless`), it starts at once and posts its numbers to the
 * server.
 */
import { pageFiles } from "./page_deno.ts"; // first: the page's Deno, before any module of the run starts
import { resolveConfig } from "../config/load.ts";
import { configSource } from "../config/presets.ts";
import type { RunConfig } from "../config/schema.ts";
import { getGpu, type Gpu } from "../gpu/device.ts";
import { loadModelDir } from "../model/model_dir.ts";
import type { Reporter, RunSummary } from "../train/types.ts";
import { evaluateCheckpoint } from "./evaluate.ts";
import { messageOf, noAdapterMessage, noWebGpuMessage, troubleOf } from "./messages.ts";
import type { StudioSetup } from "./server.ts";
import { checkpointZip, latestCheckpoint, loadMounts, readLog, trainInPage } from "./session.ts";
import { overridesFrom, SETTINGS, settingText, trainCommand } from "./settings.ts";

const PRESETS = ["textcraft_smoke", "textcraft", "textcraft_rl"];
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const body = document.body.dataset;
const charts = (globalThis as unknown as { reportCharts?: { redraw(d: unknown): void } }).reportCharts;

let setup: StudioSetup;
let gpu: Gpu | undefined;
let lost: { reason: string; message: string } | undefined;
let lastGpuError: string | undefined;
let preset = "";
let defaults: RunConfig;
let config: RunConfig | undefined;
let runDir = "";
let stopAsked = false;
let started = 0;

function status(text: string, kind: "" | "ok" | "bad" = ""): void {
  $("status").textContent = text;
  $("status").className = kind;
}

function state(s: string): void {
  body.state = s;
  const idle = ["ready", "stopped", "done", "failed"].includes(s);
  const checkpoint = runDir !== "" && latestCheckpoint(pageFiles, runDir) !== undefined;
  $<HTMLButtonElement>("train").disabled = !idle || setup?.resume !== undefined;
  $<HTMLButtonElement>("stop").disabled = s !== "training" || stopAsked;
  $<HTMLButtonElement>("continue").disabled = s !== "stopped";
  $<HTMLButtonElement>("evaluate").disabled = !idle || !checkpoint;
  $<HTMLButtonElement>("download").disabled = s === "loading" || s === "error" || !checkpoint;
  $<HTMLSelectElement>("preset").disabled = !idle || setup?.resume !== undefined;
  for (const el of document.querySelectorAll<HTMLInputElement>("#settings input")) {
    el.disabled = !idle || setup?.resume !== undefined;
  }
}

/** Posts to the command that drives the page, when one does. */
function tell(report: Record<string, unknown>): void {
  if (!setup?.auto) return;
  fetch("/studio/report", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(report),
  }).catch(() => {});
}

// ---- progress -------------------------------------------------------------------------------------------------

const bars = new Map<string, { bar: HTMLProgressElement; note: HTMLElement; n: number }>();

function logLine(text: string): void {
  const log = $("log");
  log.textContent += (log.textContent ? "\n" : "") + text;
  log.scrollTop = log.scrollHeight;
  tell({ kind: "line", text });
}

const reporter: Reporter = {
  bar(label, total) {
    const div = document.createElement("div");
    div.className = "bar";
    div.dataset.bar = label;
    const head = document.createElement("div");
    head.className = "label";
    const name = document.createElement("span");
    name.textContent = label;
    const note = document.createElement("span");
    note.className = "muted";
    head.append(name, note);
    const bar = document.createElement("progress");
    bar.max = Math.max(total, 1);
    bar.value = 0;
    div.append(head, bar);
    bars.get(label)?.bar.parentElement?.remove();
    $("bars").append(div);
    const b = { bar, note, n: 0 };
    bars.set(label, b);
    const show = (text?: string) => (note.textContent = `${b.n}/${total}${text ? ` · ${text}` : ""}`);
    show();
    return {
      tick(k = 1, text) {
        b.n += k;
        bar.value = b.n;
        show(text);
        refreshSoon();
      },
      done(text) {
        bar.value = bar.max;
        show(text);
        refresh();
      },
    };
  },
  line(text) {
    logLine(text);
    refresh();
  },
};

// ---- charts and episodes --------------------------------------------------------------------------------------

let refreshTimer: ReturnType<typeof setTimeout> | undefined;

function refreshSoon(): void {
  refreshTimer ??= setTimeout(refresh, 2000);
}

function refresh(): void {
  if (refreshTimer) clearTimeout(refreshTimer);
  refreshTimer = undefined;
  if (!runDir) return;
  charts?.redraw({
    runs: [{
      name: runDir,
      metrics: readLog(pageFiles, `${runDir}/metrics.jsonl`),
      evals: readLog(pageFiles, `${runDir}/evals.jsonl`),
    }],
  });
  showEpisodes();
}

type Episode = {
  phase: string;
  step: number;
  task: number;
  reward: number | null;
  success: boolean;
  rounds: number;
  finish: string;
  first: string;
  turns: { text: string; observation: string }[];
};

let episodes: Episode[] = [];
let extraEpisodes: Episode[] = [];

function showEpisodes(): void {
  episodes = [...(readLog(pageFiles, `${runDir}/rollouts.jsonl`) as unknown as Episode[]), ...extraEpisodes];
  const select = $<HTMLSelectElement>("episode-step");
  const keys = [...new Set(episodes.map((e) => `${e.phase} step ${e.step}`))];
  const chosen = select.value && keys.includes(select.value) && select.value !== select.dataset.newest
    ? select.value
    : keys[keys.length - 1];
  select.replaceChildren(...keys.map((k) => new Option(k, k)));
  select.dataset.newest = keys[keys.length - 1] ?? "";
  if (chosen) select.value = chosen;
  listEpisodes();
}

function listEpisodes(): void {
  const key = $<HTMLSelectElement>("episode-step").value;
  const list = $("episode-list");
  const shown = episodes.filter((e) => `${e.phase} step ${e.step}` === key);
  if (shown.length === 0) return;
  list.className = "";
  list.replaceChildren(...shown.map((e, i) => {
    const div = document.createElement("div");
    div.textContent = `task ${e.task} · reward ${e.reward ?? "–"} · ${e.success ? "solved" : e.finish} · ` +
      `${e.rounds} rounds`;
    if (e.success) div.classList.add("win");
    div.addEventListener("click", () => {
      for (const d of list.children) d.classList.remove("sel");
      div.classList.add("sel");
      showTurns(shown[i]);
    });
    return div;
  }));
  (list.firstElementChild as HTMLElement | null)?.click();
}

function showTurns(e: Episode): void {
  const entry = (who: string, text: string) => {
    const div = document.createElement("div");
    div.className = who === "agent" ? "agent" : "game";
    const head = document.createElement("div");
    head.className = "who";
    head.textContent = who;
    const pre = document.createElement("pre");
    pre.textContent = text;
    div.append(head, pre);
    return div;
  };
  const out = [entry(`game: task ${e.task}`, e.first)];
  e.turns.forEach((t, i) => out.push(entry("agent", t.text), entry(`game (turn ${i + 1})`, t.observation)));
  $("turns").replaceChildren(...out);
}

$("episode-step").addEventListener("change", listEpisodes);

// ---- settings -------------------------------------------------------------------------------------------------

function settingTexts(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of SETTINGS) out[s.key] = $<HTMLInputElement>(`set-${s.key}`).value;
  return out;
}

/** The run's config: the preset, the command line's overrides, then the page's settings (the same schema). */
function pageConfig(): { config: RunConfig; overrides: string[] } {
  const overrides = [...setup.overrides, ...overridesFrom(defaults, settingTexts())];
  return { config: resolveConfig({ text: presetText, name: `configs/${preset}.yaml` }, overrides), overrides };
}

let presetText = "";

async function choosePreset(name: string): Promise<void> {
  preset = name;
  presetText = (await configSource(name)).text;
  defaults = resolveConfig({ text: presetText, name: `configs/${name}.yaml` }, setup.overrides);
  showSettings();
  showCommand();
}

/** The settings' fields, with the values of `defaults`. */
function showSettings(): void {
  const rows: HTMLElement[] = [];
  for (const s of SETTINGS) {
    const label = document.createElement("label");
    label.textContent = s.label;
    label.htmlFor = `set-${s.key}`;
    const input = document.createElement("input");
    input.id = `set-${s.key}`;
    input.value = settingText(defaults, s);
    input.addEventListener("input", showCommand);
    const help = document.createElement("span");
    help.className = "help";
    help.textContent = `${s.help} (${s.key})`;
    rows.push(label, input, help);
  }
  $("settings").replaceChildren(...rows);
}

function showCommand(): void {
  if (setup.resume) {
    $("command").textContent = `deno task train --resume ${setup.resume}`;
    return;
  }
  try {
    $("command").textContent = trainCommand(preset, pageConfig().overrides);
  } catch (e) {
    $("command").textContent = messageOf(e);
  }
}

$("preset").addEventListener("change", () => choosePreset($<HTMLSelectElement>("preset").value).catch(fail));

// ---- the run ----------------------------------------------------------------------------------------------------

function stamp(): string {
  const d = new Date(), p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${
    p(d.getSeconds())
  }`;
}

function fail(e: unknown, loading?: string): void {
  const t = troubleOf(e, { lost, loading });
  const detail = lastGpuError && t.kind !== "lost" && !t.message.includes(lastGpuError)
    ? ` (the GPU said: ${lastGpuError})`
    : "";
  const trouble = lastGpuError && /out of memory/i.test(lastGpuError) ? troubleOf(lastGpuError, {}) : t;
  status(trouble.message + (trouble === t ? detail : ""), "bad");
  body.trouble = trouble.kind;
  tell({ kind: "error", message: trouble.message });
}

async function run(resume: boolean): Promise<void> {
  stopAsked = false;
  state("training");
  started = performance.now();
  try {
    if (!resume) {
      config = pageConfig().config;
      runDir = `${config.trainer.runs_dir}/studio-${stamp()}`;
      $("bars").replaceChildren();
      extraEpisodes = [];
    }
    status(`Training in ${runDir}…`);
    const summary = await trainInPage({
      config: config!,
      runDir,
      resume,
      reporter,
      stopRequested: () => stopAsked,
    });
    finished(summary);
  } catch (e) {
    state("failed");
    fail(e);
  }
}

function finished(s: RunSummary): void {
  const seconds = (performance.now() - started) / 1000;
  const pct = (x?: { avg: number }) => (x ? `${(100 * x.avg).toFixed(1)}%` : "n/a");
  if (s.interrupted) {
    state("stopped");
    status(
      `Stopped at a step boundary after ${seconds.toFixed(0)} s; checkpoint ${s.lastCheckpoint}. Continue, ` +
        "evaluate or download it.",
    );
  } else {
    state("done");
    status(
      `Done in ${(seconds / 60).toFixed(1)} min. Test success ${pct(s.sftEval)} after the warm start, ` +
        `${pct(s.finalEval)} after GRPO. Download the weights, or evaluate them on more goals.`,
      "ok",
    );
  }
  refresh();
  if (setup.auto) report(s, seconds);
}

/** The numbers a command that drives the page prints (deno task studio --headless --json). */
function report(s: RunSummary, seconds: number): void {
  const rl = readLog(pageFiles, `${runDir}/metrics.jsonl`).filter((m) => m.phase === "rl");
  const first = readLog(pageFiles, `${runDir}/rollouts.jsonl`).filter((e) => e.phase === "rl" && e.step === 1);
  tell({
    kind: "done",
    adapter: gpu?.name,
    runDir,
    config: preset,
    overrides: setup.resume ? setup.overrides : pageConfig().overrides,
    steps: rl.length,
    loss: rl.map((m) => m.policy_loss ?? null),
    tokensPerSecond: rl.map((m) => m.tokens_per_s ?? null),
    sampledTokens: rl.map((m) => m.sampled_tokens ?? null),
    successAfterSft: s.sftEval?.avg,
    successAfter: s.finalEval?.avg,
    meanRewardAfter: s.finalEval?.meanReward,
    evalTasks: s.finalEval?.tasks,
    wallSeconds: seconds,
    firstStep: first.map((e) => ({ task: e.task, reward: e.reward, conversation: e.conversation })),
    metrics: rl,
  });
}

$("train").addEventListener("click", () => run(false));
$("continue").addEventListener("click", () => run(true));
$("stop").addEventListener("click", () => {
  stopAsked = true;
  state("training");
  status("Stopping after the step in progress…");
});

$("evaluate").addEventListener("click", async () => {
  const dir = latestCheckpoint(pageFiles, runDir)!;
  const limit = Number($<HTMLInputElement>("eval-limit").value) || 0;
  const before = body.state!;
  state("evaluating");
  try {
    const bar = reporter.bar(`eval ${dir.slice(dir.lastIndexOf("/") + 1)}`, limit || 100);
    const { result, trajectories } = await evaluateCheckpoint(gpu!, dir, { limit, onEpisode: () => bar.tick() });
    bar.done(`success ${(100 * result.avg).toFixed(1)}%`);
    const phase = `eval on request (${dir.slice(dir.lastIndexOf("/") + 1)})`;
    extraEpisodes.push(...trajectories.map((t) => ({
      phase,
      step: 0,
      task: t.task,
      reward: t.reward,
      success: t.success,
      rounds: t.rounds,
      finish: t.finish,
      first: t.firstObservation,
      turns: t.turns,
    })));
    state(before);
    status(
      `Greedy on ${result.tasks} of ${result.splitTasks} test goals: success ${(100 * result.avg).toFixed(1)}%, ` +
        `mean reward ${result.meanReward.toFixed(3)} (${dir}).`,
      "ok",
    );
    body.evalSuccess = String(result.avg);
    body.evalTasks = String(result.tasks);
    showEpisodes();
  } catch (e) {
    state(before);
    fail(e);
  }
});

$("download").addEventListener("click", () => {
  try {
    const dir = latestCheckpoint(pageFiles, runDir)!;
    const name = `${runDir.slice(runDir.lastIndexOf("/") + 1)}-${dir.slice(dir.lastIndexOf("/") + 1)}`;
    const zip = checkpointZip(pageFiles, dir, name);
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([zip as Uint8Array<ArrayBuffer>], { type: "application/zip" }));
    a.download = `${name}.zip`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
    status(`Saved ${name}.zip: unzip it and run deno task eval --model ${name}, or deno task play --model ${name}.`);
  } catch (e) {
    fail(e);
  }
});

// ---- start --------------------------------------------------------------------------------------------------------

/** The browser's WebGPU and an adapter, or a message saying what is missing. */
async function openGpu(): Promise<Gpu> {
  if (!("gpu" in navigator) || !navigator.gpu) throw new Error(noWebGpuMessage(isSecureContext));
  const adapter = await navigator.gpu.requestAdapter().catch(() => null);
  if (!adapter) throw new Error(noAdapterMessage());
  const g = await getGpu();
  g.device.lost.then((info) => {
    if (info.reason === "destroyed") return;
    lost = { reason: info.reason, message: info.message };
    fail(new Error(info.message));
    state("failed");
  });
  g.device.addEventListener("uncapturederror", (ev) => {
    lastGpuError = (ev as GPUUncapturedErrorEvent).error.message;
  });
  return g;
}

async function start(): Promise<void> {
  setup = await (await fetch("/studio/setup")).json();
  $("model-name").textContent = `model: ${setup.model}`;
  try {
    gpu = await openGpu();
  } catch (e) {
    body.gpu = "none";
    state("error");
    status(messageOf(e), "bad");
    tell({ kind: "error", message: messageOf(e) });
    return;
  }
  body.gpu = "ok";
  $("adapter-name").textContent = `GPU: ${gpu.name}${gpu.software ? " (software)" : ""}`;
  status(`Loading ${setup.model}…`);
  try {
    await loadMounts(setup, pageFiles, (n, total) =>
      status(
        `Loading ${setup.model}: ${(n / 1e6).toFixed(1)} of ` +
          `${(total / 1e6).toFixed(1)} MB`,
      ));
    const model = await loadModelDir(setup.model);
    if (!model.tokenizer) throw new TypeError("it has no tokenizer.json, which the agent needs to read and write");
  } catch (e) {
    state("error");
    fail(e, setup.model);
    return;
  }
  if (setup.resume) {
    // A deno task train run, continued here from its latest checkpoint with its own config.
    runDir = setup.resume;
    const text = new TextDecoder().decode(pageFiles.get(`${setup.resume}/config.yaml`));
    config = defaults = resolveConfig({ text, name: `${setup.resume}/config.yaml` }, setup.overrides);
    $("config-name").textContent = `(${setup.resume}/config.yaml)`;
    $<HTMLSelectElement>("preset").replaceChildren(new Option(`${setup.resume}`, ""));
    showSettings();
    showCommand();
    refresh();
    state("stopped");
    status(`Ready to continue ${setup.resume} from its latest checkpoint: press Continue.`);
    if (setup.auto) await run(true);
    return;
  }
  const names = PRESETS.includes(setup.config) ? PRESETS : [setup.config, ...PRESETS];
  $<HTMLSelectElement>("preset").replaceChildren(...names.map((n) => new Option(n, n)));
  $<HTMLSelectElement>("preset").value = setup.config;
  await choosePreset(setup.config);
  state("ready");
  status(`Ready: ${setup.model} on ${gpu.name}. Press Train.`);
  if (setup.auto) {
    if (setup.auto.steps > 0) $<HTMLInputElement>("set-trainer.total_steps").value = String(setup.auto.steps);
    showCommand();
    await run(false);
  }
}

start().catch((e) => {
  state("error");
  fail(e);
});
