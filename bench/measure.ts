/**
 * Timing of one benchmark case: the first run (pipeline creation and, on Mesa, the shader's first compile), then
 * steady runs for a time budget. GPU time comes from timestamp queries where the device has them, else from the
 * wall clock over several runs in one submit.
 */
import process from "node:process";
import { Batch } from "../src/gpu/batch.ts";
import type { Gpu } from "../src/gpu/device.ts";
import { GpuTimer } from "../src/gpu/timing.ts";
import type { BenchCase, BenchRun } from "./registry.ts";

/** What one case measured. Times in milliseconds. */
export interface BenchResult {
  kernel: string;
  variant: string;
  shape: string;
  /** Best steady time of one run. */
  ms: number;
  medianMs: number;
  /** flops / ms, when the case counts flops. */
  gflops?: number;
  /** bytes / ms, when the case counts bytes. */
  gbps?: number;
  /**
   * First run minus the fastest single-run submit, both timed from recording to completion: pipeline creation plus
   * the driver's first compile (0 when an earlier case already built the pipeline).
   */
  compileMs: number;
  /** Steady samples taken. */
  reps: number;
  timer: "timestamp" | "wall";
  picked: boolean;
  /**
   * Software adapters only: process CPU time per run divided by the cores, the time an otherwise idle machine
   * would take. Robust to other programs sharing the cores, unlike `ms`.
   */
  cpuMs?: number;
}

/** Options of {@linkcode measureCase}. */
export interface MeasureOptions {
  /** Time spent on steady runs after the first two; at least `minReps` samples (default 2; 1 past twice the budget). */
  budgetMs: number;
  minReps?: number;
  maxReps?: number;
}

/**
 * SYNC POINT: records `n` runs in one batch, submits and waits; returns the wall time in ms, recording included
 * (pipelines are created while recording; Mesa compiles them at their first dispatch).
 */
async function timedRuns(gpu: Gpu, run: BenchRun, n: number, timer?: GpuTimer): Promise<number> {
  const t0 = performance.now();
  const batch = new Batch(gpu, timer);
  for (let i = 0; i < n; i++) run.record(batch);
  await batch.submit();
  await gpu.device.queue.onSubmittedWorkDone();
  return performance.now() - t0;
}

/** Runs one case: setup, first run, one warm run, then steady samples; releases what setup allocated. */
export async function measureCase(gpu: Gpu, c: BenchCase, opts: MeasureOptions): Promise<BenchResult> {
  const run = await c.setup(gpu);
  let minReps = opts.minReps ?? 2;
  const maxReps = opts.maxReps ?? 50;
  const timer = gpu.features.timestamps ? new GpuTimer(gpu, 256) : undefined;
  try {
    await gpu.device.queue.onSubmittedWorkDone(); // uploads done before the clock starts
    const firstMs = await timedRuns(gpu, run, 1);
    // The fastest single-run submit, to subtract from the first: the rest of the first is compilation.
    let singleMs = await timedRuns(gpu, run, 1);
    // A run longer than twice the budget is timed once more, not twice (shared-memory tiles on lavapipe take seconds).
    if (opts.minReps === undefined && singleMs > 2 * opts.budgetMs) minReps = 1;
    // Wall mode puts enough runs in one submit to hide its fixed cost (about 11 ms in Deno).
    const perSample = timer ? 1 : Math.min(100, Math.max(1, Math.ceil(100 / Math.max(singleMs, 0.01))));
    const samples: number[] = [];
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    while (samples.length < minReps || (performance.now() - start < opts.budgetMs && samples.length < maxReps)) {
      const wall = await timedRuns(gpu, run, perSample, timer);
      if (perSample === 1) singleMs = Math.min(singleMs, wall);
      if (timer) samples.push((await timer.read()).reduce((s, t) => s + t.ms, 0));
      else samples.push(wall / perSample);
    }
    const cpu = process.cpuUsage(cpu0);
    const sorted = [...samples].sort((a, b) => a - b);
    const ms = sorted[0];
    const cores = navigator.hardwareConcurrency || 1;
    return {
      kernel: c.kernel,
      variant: c.variant,
      shape: c.shape,
      ms,
      medianMs: sorted[Math.floor(sorted.length / 2)],
      ...(c.flops !== undefined ? { gflops: c.flops / ms / 1e6 } : {}),
      ...(c.bytes !== undefined ? { gbps: c.bytes / ms / 1e6 } : {}),
      compileMs: Math.max(0, firstMs - singleMs),
      reps: samples.length,
      timer: timer ? "timestamp" : "wall",
      picked: c.picked ?? false,
      ...(gpu.software ? { cpuMs: (cpu.user + cpu.system) / 1000 / cores / (samples.length * perSample) } : {}),
    };
  } finally {
    timer?.destroy();
    run.release();
  }
}
