/**
 * The page's numbers against Deno's (`deno task studio --headless --compare`): the run the page made, made again by
 * `runTraining` in this process with the same config (the page's preset and overrides, the model's own path), and
 * its GRPO steps' losses, speed and first step's episodes set beside the page's. Kernel tuning is off on both sides
 * (the seeded variants: the page never tunes), so a kernel cache on this machine cannot make them differ.
 */
import { resolveConfig } from "../config/load.ts";
import { configSource } from "../config/presets.ts";
import { getGpu } from "../gpu/device.ts";
import { TUNE_ENV } from "../gpu/tuner.ts";
import { runTraining } from "../train/run.ts";
import type { Reporter } from "../train/types.ts";

/** What the page reported at the end of its run (app.ts's `report`). */
export interface PageReport {
  adapter?: string;
  config: string;
  overrides: string[];
  steps: number;
  loss: (number | null)[];
  tokensPerSecond: (number | null)[];
  sampledTokens: (number | null)[];
  successAfterSft?: number;
  successAfter?: number;
  meanRewardAfter?: number;
  evalTasks?: number;
  wallSeconds: number;
  firstStep: { task: number; reward: number | null; conversation: string }[];
  /** The GRPO steps' metrics lines, as metrics.jsonl holds them. */
  metrics: Record<string, unknown>[];
}

/** Deno's numbers for the same run, and how they compare. */
export interface DenoComparison {
  denoAdapter: string;
  denoLoss: (number | null)[];
  /** |page − Deno| / |Deno| per GRPO step (null where either has no loss). */
  lossRelDiff: (number | null)[];
  denoTokensPerSecond: (number | null)[];
  /** Deno's GRPO steps' metrics lines. */
  denoMetrics: Record<string, unknown>[];
  denoWallSeconds: number;
  denoSuccessAfter?: number;
  /** Whether the first GRPO step sampled the same episodes (task, reward and conversation, in order). */
  sameFirstStepEpisodes: boolean;
  /** The first of them that differs, when one does. */
  firstDifference?: { index: number; page: string; deno: string };
}

/** Runs the page's run again in Deno (see the module header); `runDir` must not exist and is left for inspection. */
export async function compareInDeno(page: PageReport, runDir: string, reporter: Reporter): Promise<DenoComparison> {
  const config = resolveConfig(await configSource(page.config), page.overrides);
  const before = Deno.env.get(TUNE_ENV);
  Deno.env.set(TUNE_ENV, "off");
  const start = performance.now();
  try {
    await runTraining({ config, runDir, resume: false, reporter, stopRequested: () => false });
  } finally {
    if (before === undefined) Deno.env.delete(TUNE_ENV);
    else Deno.env.set(TUNE_ENV, before);
  }
  const wall = (performance.now() - start) / 1000;
  const lines = async (f: string) =>
    (await Deno.readTextFile(`${runDir}/${f}`)).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  const rl = (await lines("metrics.jsonl")).filter((m) => m.phase === "rl");
  const evals = (await lines("evals.jsonl")).filter((e) => e.phase === "final");
  const first = (await lines("rollouts.jsonl")).filter((e) => e.phase === "rl" && e.step === 1);
  const denoLoss = rl.map((m) => m.policy_loss ?? null);
  const key = (e: { task: number; reward: number | null; conversation: string }) =>
    `task ${e.task} reward ${e.reward}\n${e.conversation}`;
  const n = Math.max(first.length, page.firstStep.length);
  let firstDifference: DenoComparison["firstDifference"];
  for (let i = 0; i < n && !firstDifference; i++) {
    const a = page.firstStep[i] ? key(page.firstStep[i]) : "(none)", b = first[i] ? key(first[i]) : "(none)";
    if (a !== b) firstDifference = { index: i, page: a, deno: b };
  }
  return {
    denoAdapter: (await getGpu()).name,
    denoLoss,
    lossRelDiff: denoLoss.map((d, i) => {
      const p = page.loss[i];
      return d === null || p === null || p === undefined ? null : Math.abs(p - d) / Math.max(Math.abs(d), 1e-30);
    }),
    denoTokensPerSecond: rl.map((m) => m.tokens_per_s ?? null),
    denoMetrics: rl,
    denoWallSeconds: wall,
    denoSuccessAfter: evals[evals.length - 1]?.avg,
    sameFirstStepEpisodes: firstDifference === undefined,
    ...(firstDifference ? { firstDifference } : {}),
  };
}
