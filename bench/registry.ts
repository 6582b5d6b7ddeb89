/**
 * The registry of kernel benchmark cases. An op adds its cases in a module of its own (bench/<op>.ts) that
 * calls {@linkcode registerBench}, imported once from bench/cases.ts:
 *
 * ```ts
 * registerBench("rmsnorm", (gpu) => [{
 *   kernel: "rmsnorm", variant: "default", shape: "512x896 f32",
 *   bytes: 2 * 512 * 896 * 4,
 *   setup(gpu) {
 *     const x = zeros(gpu, [512, 896]), y = zeros(gpu, [512, 896]);
 *     return { record: (batch) => rmsnorm(batch, { x, out: y }), release: () => [x, y].forEach((t) => t.release()) };
 *   },
 * }]);
 * ```
 */
import type { Batch } from "../src/gpu/batch.ts";
import type { Gpu } from "../src/gpu/device.ts";

/** One run's worth of GPU work, with its inputs already on the device. */
export interface BenchRun {
  /** Records exactly one run of the kernel (one or more dispatches) into the batch. */
  record(batch: Batch): void;
  /** Frees what setup allocated. */
  release(): void;
}

/** One kernel, variant and shape to time. */
export interface BenchCase {
  /** The op, e.g. "matmul". */
  kernel: string;
  /** The variant or block shape, e.g. "reg64x8"; "default" where the op has one. */
  variant: string;
  /** Sizes, layout and dtypes, e.g. "512x4864x896 NT f32xf16". */
  shape: string;
  /** Floating-point operations of one run (FMA = 2), for GFLOP/s; omit for memory-bound kernels. */
  flops?: number;
  /** Bytes one run must read and write at least, for GB/s. */
  bytes?: number;
  /** True when this variant is the one the op picks for this shape on this adapter. */
  picked?: boolean;
  /** Allocates and fills the inputs (async when it must run GPU work first, e.g. a forward for a backward). */
  setup(gpu: Gpu): BenchRun | Promise<BenchRun>;
}

/** Makes the cases of one op for an adapter (the variants and the pick depend on it). */
export type BenchCases = (gpu: Gpu) => BenchCase[];

const registry = new Map<string, BenchCases>();

/** Registers (or replaces) the cases of one op. */
export function registerBench(kernel: string, cases: BenchCases): void {
  registry.set(kernel, cases);
}

/** Every registered case for this adapter, in registration order. */
export function benchCases(gpu: Gpu): BenchCase[] {
  return [...registry.values()].flatMap((make) => make(gpu));
}

/** The label a case is filtered by: "kernel variant shape". */
export function caseLabel(c: BenchCase): string {
  return `${c.kernel} ${c.variant} ${c.shape}`;
}
