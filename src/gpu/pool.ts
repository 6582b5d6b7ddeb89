/**
 * A pool of storage buffers, one per device, in size buckets of 1/8 octave (at most 12.5% waste).
 *
 * Invariant: a buffer released while a batch is being recorded is handed out again before that batch is submitted
 * only to callers that promise GPU-only use (`gpuOnly`): later dispatches of the same batch run after the earlier
 * ones that read it, but a host `writeBuffer` or a separate submit would land before them. Queue order does the
 * rest: work issued after a submit runs after it, so buffers can be reused across steps without a wait.
 */

const USAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const MIN_BYTES = 256;

/** Byte counts of one pool, for memory reports. */
export interface PoolStats {
  /** Bytes in buffers handed out and not released. */
  live: number;
  /** The most `live` has ever been. */
  peak: number;
  /** Bytes in released buffers kept for reuse. */
  cached: number;
}

/** Rounds a byte count up to its bucket: multiples of 1/8 of the power of two below it. */
export function bucketBytes(bytes: number): number {
  if (bytes <= MIN_BYTES) return MIN_BYTES;
  const octave = 2 ** Math.floor(Math.log2(bytes));
  const step = Math.max(octave / 8, MIN_BYTES);
  return Math.ceil(bytes / step) * step;
}

/** The largest bucket of at most `bytes` bytes: every byte count up to it is pooled in a buffer that size or smaller. */
export function bucketFloor(bytes: number): number {
  if (bytes < MIN_BYTES) return 0;
  const octave = 2 ** Math.floor(Math.log2(bytes));
  const step = Math.max(octave / 8, MIN_BYTES);
  return Math.floor(bytes / step) * step;
}

/** Storage buffers by bucket size, reused across steps. */
export class BufferPool {
  #free = new Map<number, GPUBuffer[]>();
  /** Released during the open batch: reusable by GPU-only tensors of that batch, by anyone after its submit. */
  #recent = new Map<number, GPUBuffer[]>();
  #recording = 0;
  #stats: PoolStats = { live: 0, peak: 0, cached: 0 };

  constructor(readonly device: GPUDevice) {}

  /**
   * A buffer of at least `bytes` bytes; its contents are whatever the last user left. `gpuOnly` promises that
   * only dispatches and encoder commands of the open batch will touch it (no host write, no separate submit).
   */
  acquire(bytes: number, label?: string, gpuOnly = false): GPUBuffer {
    const size = bucketBytes(bytes);
    const reused = (gpuOnly ? this.#recent.get(size)?.pop() : undefined) ?? this.#free.get(size)?.pop();
    if (reused) this.#stats.cached -= size;
    const buffer = reused ?? this.device.createBuffer({ size, usage: USAGE, label });
    this.#stats.live += size;
    this.#stats.peak = Math.max(this.#stats.peak, this.#stats.live);
    return buffer;
  }

  /** Gives a buffer back; it is reused after the batch being recorded (if any) is submitted. */
  release(buffer: GPUBuffer): void {
    this.#stats.live -= buffer.size;
    this.#park(buffer, this.#recording > 0 ? this.#recent : this.#free);
  }

  /** A batch started recording: hold releases until it is submitted. */
  beginRecording(): void {
    this.#recording++;
  }

  /** A batch was submitted (or dropped): releases held for it become reusable. */
  endRecording(): void {
    this.#recording = Math.max(0, this.#recording - 1);
    if (this.#recording > 0) return;
    for (const list of this.#recent.values()) for (const b of list) this.#park(b, this.#free, false);
    this.#recent.clear();
  }

  /** Destroys every cached buffer (memory back to the driver). */
  trim(): void {
    for (const list of this.#free.values()) for (const b of list) b.destroy();
    this.#free.clear();
    this.#stats.cached = 0;
  }

  /** Resets the peak to the current live bytes (to measure one phase). */
  resetPeak(): void {
    this.#stats.peak = this.#stats.live;
  }

  get stats(): PoolStats {
    return { ...this.#stats };
  }

  #park(buffer: GPUBuffer, into: Map<number, GPUBuffer[]>, count = true): void {
    const list = into.get(buffer.size) ?? [];
    list.push(buffer);
    into.set(buffer.size, list);
    if (count) this.#stats.cached += buffer.size;
  }
}

const pools = new WeakMap<GPUDevice, BufferPool>();

/** The pool of a device, created on first use. */
export function poolOf(device: GPUDevice): BufferPool {
  let pool = pools.get(device);
  if (!pool) {
    pool = new BufferPool(device);
    pools.set(device, pool);
  }
  return pool;
}
