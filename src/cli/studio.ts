/**
 * `deno task studio [NAME] [--model DIR | --resume RUN_DIR] [--port N] [--host NAME] [key.path=value ...]`: serves
 * the studio page (src/studio/), where the browser trains an agent on TextCraft with Crucible's own kernels and
 * training code, bundled for it. `--headless --steps N [--json] [--compare]` drives the page in headless Chromium
 * instead and prints what it did (and what Deno does with the same run).
 */
import { compareInDeno, type PageReport } from "../studio/compare.ts";
import { openHeadless } from "../studio/headless.ts";
import { mountOf, serveStudio, type StudioSetup } from "../studio/server.ts";
import { resolveConfig } from "../config/load.ts";
import { configSource, PRESET_NAMES } from "../config/presets.ts";
import { dryRun, numberFlag, parseFlags } from "../command/args.ts";
import { terminalReporter } from "../command/progress.ts";
import { readRunConfig } from "./train.ts";

const USAGE = `Usage: deno task studio [NAME] [--model DIR | --resume RUN_DIR] [--port N] [key.path=value ...]
       deno task studio [NAME] --headless [--steps N] [--json] [--compare] [key.path=value ...]

Serves a page where your browser trains an agent on TextCraft: the warm start on the oracle's episodes, then GRPO
steps with KV-cached sampling, with the same WGSL kernels, RL code and config schema as deno task train, on the
browser's WebGPU, the game played in the page. Change the settings, watch the charts and episodes, stop at a step
boundary, evaluate greedily, and download the weights as a model folder that deno task eval --model and
deno task play --model load. Everything the page loads comes from this server. docs/studio.md has browsers and
speeds.

Options:
  NAME              the config the page's settings start from (default textcraft, the main job; textcraft_smoke
                    runs in minutes, even without a GPU)
  --model DIR       the model to start from: a Crucible or Hugging Face model folder, or a checkpoint of a run
                    (default: the config's model.path, models/crucible-base)
  --resume RUN_DIR  continue a deno task train run from its latest checkpoint in the page
  --port N          port to listen on; 0 picks a free one (default 8000)
  --host NAME       interface to bind (default 127.0.0.1)
  --headless        open the page in headless Chromium (WebGPU on SwiftShader, no GPU needed), train, print, quit
  --steps N         with --headless: GRPO steps (config trainer.total_steps; default the config's)
  --json            with --headless: print one JSON object (adapter, steps, loss per step, successAfter,
                    wallSeconds, tokensPerSecond, and with --compare denoLoss, lossRelDiff, sameFirstStepEpisodes)
  --compare         with --headless: then train the same run in Deno here and set its numbers beside the page's
  key.path=value    config overrides for the page's run, as deno task train takes them
  -h, --help        this text

Examples:
  deno task studio
  deno task studio textcraft_smoke --model runs/textcraft-20261128-071225/checkpoints/final
  deno task studio textcraft_smoke --headless --steps 2 --json --compare`;

/** Runs the command. */
export async function main(args: string[]): Promise<void> {
  const { values: v, positionals } = parseFlags("deno task studio", {
    args,
    allowPositionals: true,
    options: {
      model: { type: "string" },
      resume: { type: "string" },
      port: { type: "string" },
      host: { type: "string", default: "127.0.0.1" },
      headless: { type: "boolean" },
      steps: { type: "string" },
      json: { type: "boolean" },
      compare: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) return console.log(USAGE);
  const overrides = positionals.filter((p) => p.includes("="));
  const names = positionals.filter((p) => !p.includes("="));
  if (names.length > 1) throw new TypeError(`Give one config name, got ${names.join(", ")}. ${USAGE}`);
  const config = names[0] ?? "textcraft";
  if (!PRESET_NAMES.includes(config)) {
    throw new RangeError(`Unknown config "${config}": the page starts from a shipped one: ${PRESET_NAMES.join(", ")}`);
  }
  if (!v.headless && (v.steps || v.json || v.compare)) {
    throw new TypeError("--steps, --json and --compare go with --headless (the page drives itself and reports)");
  }
  if (v.resume && v.compare) throw new TypeError("--compare trains a new run in both; it does not go with --resume");
  if (v.resume && (v.model || v.steps)) {
    throw new TypeError(
      "--resume continues the run with its own config.yaml: give no --model, and change its steps with " +
        "trainer.total_steps=N",
    );
  }
  const port = numberFlag("--port", v.port, v.headless ? 0 : 8000, { lo: 0, hi: 65535, integer: true });
  const steps = v.steps === undefined ? undefined : numberFlag("--steps", v.steps, 0, { lo: 1, integer: true });
  if (dryRun(`would serve the studio page (${config}) on ${v.host}:${port}`)) return;
  const setup = await studioSetup(config, overrides, v.model, v.resume);
  if (!v.headless) {
    const server = await serveStudio({ setup, port, hostname: v.host });
    console.log(`Train an agent in your browser: open ${server.url} (Ctrl-C stops the server)`);
    return;
  }
  await headless(setup, { steps, json: v.json ?? false, compare: v.compare ?? false, port, host: v.host! });
}

/** What the page starts from: the model folder (and a run folder to resume), with the overrides. */
async function studioSetup(config: string, overrides: string[], model?: string, resume?: string): Promise<StudioSetup> {
  const topLevel = (name: string) => !name.includes("/");
  if (resume) {
    const run = resume.replace(/\/+$/, "");
    const path = resolveConfig({ text: await readRunConfig(run), name: `${run}/config.yaml` }).model.path;
    const latest = (await Deno.readTextFile(`${run}/checkpoints/latest`).catch(() => "")).trim();
    if (!latest) throw new Deno.errors.NotFound(`${run} has no checkpoint to continue from (checkpoints/latest)`);
    // The run's files but its older checkpoints: the latest, and sft-final (RL's KL reference when it has one).
    const kept = [`checkpoints/${latest}`, "checkpoints/sft-final"];
    const keep = (name: string) =>
      !name.startsWith("checkpoints/") || name === "checkpoints/latest" ||
      kept.some((k) => name === k || name.startsWith(`${k}/`));
    const mounts = [await mountOf(run, keep)];
    if (path) mounts.push(await mountOf(path, topLevel));
    return { config, overrides, model: path ?? `${run}/checkpoints/${latest}`, mounts, resume: run };
  }
  if (model) overrides = [`model.path=${JSON.stringify(model)}`, ...overrides];
  const path = resolveConfig(await configSource(config), overrides).model.path;
  if (!path) throw new RangeError(`The ${config} config names no model.path; give --model DIR`);
  const mount = await mountOf(path, topLevel);
  return { config, overrides, model: mount.path, mounts: [mount] };
}

/** --headless: the page in headless Chromium, its reports on stderr, its numbers (and Deno's) on stdout. */
async function headless(
  setup: StudioSetup,
  o: { steps?: number; json: boolean; compare: boolean; port: number; host: string },
): Promise<void> {
  let done!: (r: Record<string, unknown>) => void;
  const t0 = performance.now();
  const at = () => `[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s]`;
  const result = new Promise<Record<string, unknown>>((resolve) => (done = resolve));
  const server = await serveStudio({
    setup: { ...setup, auto: { steps: o.steps ?? 0 } },
    port: o.port,
    hostname: o.host,
    onReport: (r) => {
      if (r.kind === "line") console.error(`${at()} page: ${r.text}`);
      else done(r);
    },
  });
  console.error(`Driving ${server.url} in headless Chromium (WebGPU on SwiftShader)…`);
  const browser = await openHeadless(server.url);
  // Ctrl-C (or a SIGTERM) ends the browser with the command, never leaving it behind.
  const quit = () => browser.close().finally(() => Deno.exit(130));
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const sig of signals) Deno.addSignalListener(sig, quit);
  let report: Record<string, unknown>;
  try {
    report = await Promise.race([
      result,
      browser.exited.then((s) => ({
        kind: "error",
        message: `Chromium exited (code ${s.code}) before the page finished`,
      })),
    ]);
  } finally {
    for (const sig of signals) Deno.removeSignalListener(sig, quit);
    await browser.close();
    await server.shutdown();
  }
  if (report.kind === "error") throw new Error(`The page's run failed: ${report.message}`);
  const page = report as unknown as PageReport;
  const out: Record<string, unknown> = {
    adapter: page.adapter,
    config: page.config,
    overrides: page.overrides,
    steps: page.steps,
    loss: page.loss,
    successAfterSft: page.successAfterSft,
    successAfter: page.successAfter,
    evalTasks: page.evalTasks,
    tokensPerSecond: page.tokensPerSecond,
    sampledTokens: page.sampledTokens,
    wallSeconds: page.wallSeconds,
    metrics: page.metrics,
  };
  if (o.compare) {
    const runDir = await Deno.makeTempDir({ prefix: "crucible-studio-compare-" });
    await Deno.remove(runDir);
    console.error(`Training the same run in Deno (${runDir})…`);
    Object.assign(out, await compareInDeno(page, runDir, terminalReporter({ quiet: o.json })), { denoRunDir: runDir });
  }
  if (o.json) return console.log(JSON.stringify(out));
  const fmt = (xs: unknown) => (xs as (number | null)[]).map((x) => (x === null ? "–" : x.toPrecision(6))).join(", ");
  console.log(
    `page (${page.adapter}): ${page.steps} GRPO steps in ${page.wallSeconds.toFixed(0)} s, loss ${fmt(page.loss)}, ` +
      `success after ${page.successAfter === undefined ? "n/a" : `${(100 * page.successAfter).toFixed(1)}%`}`,
  );
  if (o.compare) {
    console.log(
      `deno (${out.denoAdapter}): loss ${fmt(out.denoLoss)}; relative difference ${fmt(out.lossRelDiff)}; ` +
        `first step's episodes ${out.sameFirstStepEpisodes ? "the same" : "differ"}`,
    );
  }
}
