/**
 * GPU timings through `timestamp-query`, for the benchmarks. A batch given a timer puts every dispatch in a pass
 * of its own with begin/end timestamps (which costs some speed: never time production runs).
 */
import { Batch, type DispatchTimer } from "./batch.ts";
import type { Gpu } from "./device.ts";

/** Time of one timed dispatch. */
export interface Timing {
  /** The dispatch's label (its kernel's name unless it gave one). */
  label: string;
  /** GPU time between its start and end timestamps, in milliseconds. */
  ms: number;
}

/** Timestamps for up to `capacity` dispatches. */
export class GpuTimer implements DispatchTimer {
  readonly #set: GPUQuerySet | undefined;
  readonly #resolveBuffer: GPUBuffer | undefined;
  readonly #readBuffer: GPUBuffer | undefined;
  #labels: string[] = [];

  /** A timer for up to `capacity` dispatches; without `timestamp-query` it times nothing. */
  constructor(readonly gpu: Gpu, readonly capacity = 256) {
    if (!gpu.features.timestamps) return;
    this.#set = gpu.device.createQuerySet({ type: "timestamp", count: capacity * 2 });
    this.#resolveBuffer = gpu.device.createBuffer({
      size: capacity * 16,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    this.#readBuffer = gpu.device.createBuffer({
      size: capacity * 16,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /** Whether the device can time dispatches at all. */
  get available(): boolean {
    return this.#set !== undefined;
  }

  /** Timestamp writes for the next dispatch, or undefined when unavailable or full. */
  next(label: string): GPUComputePassTimestampWrites | undefined {
    if (!this.#set || this.#labels.length >= this.capacity) return undefined;
    const i = this.#labels.length;
    this.#labels.push(label);
    return { querySet: this.#set, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 };
  }

  /** Records the resolve of all timestamps so far into the read buffer (called by the batch at submit). */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.#set || this.#labels.length === 0) return;
    const n = this.#labels.length * 2;
    encoder.resolveQuerySet(this.#set, 0, n, this.#resolveBuffer!, 0);
    encoder.copyBufferToBuffer(this.#resolveBuffer!, 0, this.#readBuffer!, 0, n * 8);
  }

  /** SYNC POINT: reads the timings of the submitted batch and resets the timer. */
  async read(): Promise<Timing[]> {
    if (!this.#readBuffer || this.#labels.length === 0) return [];
    await this.#readBuffer.mapAsync(GPUMapMode.READ);
    const ticks = new BigUint64Array(this.#readBuffer.getMappedRange().slice(0, this.#labels.length * 16));
    this.#readBuffer.unmap();
    const out = this.#labels.map((label, i) => ({ label, ms: Number(ticks[2 * i + 1] - ticks[2 * i]) / 1e6 }));
    this.#labels = [];
    return out;
  }

  /** Frees the query set and its buffers. */
  destroy(): void {
    this.#set?.destroy();
    this.#resolveBuffer?.destroy();
    this.#readBuffer?.destroy();
  }
}

/**
 * SYNC POINTS: the best time in ms of the GPU work `record` puts in a batch, over `reps` submits after a first one
 * (which builds the pipelines, uncounted). GPU time from timestamps where the device has them (every dispatch in a
 * pass of its own, summed); else the wall time of several runs in one submit, divided by the runs.
 */
export async function timeRecorded(gpu: Gpu, record: (batch: Batch) => void, reps = 3): Promise<number> {
  const submit = async (runs: number, timer?: GpuTimer) => {
    const t0 = performance.now();
    const batch = new Batch(gpu, timer);
    for (let i = 0; i < runs; i++) record(batch);
    await batch.submit();
    await gpu.device.queue.onSubmittedWorkDone();
    return performance.now() - t0;
  };
  const first = await submit(1);
  const timer = gpu.features.timestamps ? new GpuTimer(gpu, 64) : undefined;
  // Without timestamps, enough runs per submit to hide its fixed cost (about 11 ms in Deno).
  const runs = timer ? 1 : Math.min(50, Math.max(1, Math.ceil(20 / Math.max(first, 0.1))));
  let best = Infinity;
  try {
    for (let i = 0; i < reps; i++) {
      const wall = await submit(runs, timer);
      const ms = timer ? (await timer.read()).reduce((s, t) => s + t.ms, 0) : wall / runs;
      best = Math.min(best, ms);
    }
  } finally {
    timer?.destroy();
  }
  return best;
}
