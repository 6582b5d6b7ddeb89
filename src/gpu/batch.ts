/**
 * Command batching: many dispatches recorded into one encoder (and one compute pass while possible), one submit.
 *
 * Uniform blocks of all dispatches are packed into 64 KiB chunks at the adapter's offset alignment and written
 * with one `writeBuffer` per chunk. Chunks are reused by later batches without waiting: queue order guarantees a
 * later write lands after the earlier submit has been executed.
 */
import type { Gpu } from "./device.ts";
import type { Kernel } from "./pipeline.ts";
import { poolOf } from "./pool.ts";
import { decodeHost, type HostData, placeholder, scratch, type Tensor } from "./tensor.ts";
import { runPendingTuning } from "./tuner.ts";

const CHUNK_BYTES = 64 * 1024;

/**
 * What a batch asks of a timer (timing.ts's GpuTimer is one): timestamp writes for each dispatch, and the resolve of
 * them at submit. Declared here so that the batch needs nothing of the timer's module, which itself records batches.
 */
export interface DispatchTimer {
  /** Timestamp writes for the next dispatch, labelled; undefined when the timer is unavailable or full. */
  next(label: string): GPUComputePassTimestampWrites | undefined;
  /** Records the resolve of every timestamp so far (at submit). */
  resolve(encoder: GPUCommandEncoder): void;
}

/** Workgroup counts of a dispatch. */
export type Grid = readonly [number, number?, number?];

/** One dispatch: a kernel, its storage bindings in binding order (from 1), its uniforms (binding 0), a grid. */
export interface Dispatch {
  /** The compiled pipeline to run (see `kernel`). */
  kernel: Kernel;
  /**
   * Storage buffers at bindings 1, 2, ... in the order the shader declares them. `undefined` (or a short list)
   * binds a placeholder, for bindings the entry point does not use.
   */
  buffers: readonly (Tensor | undefined)[];
  /** The uniforms by field name, packed by the kernel's `params` layout; omitted when it has none. */
  params?: Record<string, number>;
  /** Workgroup counts in x, y, z. */
  grid: Grid;
  /** Names the dispatch in timings; defaults to the kernel's name. */
  label?: string;
}

const spareChunks = new WeakMap<GPUDevice, GPUBuffer[]>();

/**
 * Records GPU work for one submit.
 *
 * @example
 * ```ts
 * const batch = new Batch(gpu);
 * batch.dispatch({ kernel: k, buffers: [x, y], params: { n: 4 }, grid: [1] });
 * const [out] = await batch.read([y]); // submits, then waits: a sync point
 * ```
 */
export class Batch {
  /** The command encoder the batch records into; submitted by `read` or `submit`. */
  readonly encoder: GPUCommandEncoder;
  #pass: GPUComputePassEncoder | undefined;
  #chunk: GPUBuffer | undefined;
  #staging = new Uint8Array(CHUNK_BYTES);
  #used = 0;
  #chunks: GPUBuffer[] = [];
  #kernels = new Set<Kernel>();
  #done = false;
  readonly #align: number;

  /** A batch on `gpu`; with a `timer`, each dispatch is timed (the timer's capacity permitting). */
  constructor(readonly gpu: Gpu, readonly timer?: DispatchTimer) {
    this.encoder = gpu.device.createCommandEncoder();
    this.#align = gpu.limits.minUniformBufferOffsetAlignment;
    poolOf(gpu.device).beginRecording();
    // Validation errors of recording (bad bind groups, ...) would otherwise go to the console unseen.
    gpu.device.pushErrorScope("validation");
  }

  /** Number of dispatches recorded so far. */
  dispatches = 0;

  /** Records one dispatch. Empty grids (a zero dimension) are skipped. */
  dispatch(d: Dispatch): void {
    this.#open();
    const [x, y = 1, z = 1] = d.grid;
    if (x === 0 || y === 0 || z === 0) return;
    const max = this.gpu.limits.maxComputeWorkgroupsPerDimension;
    if (x > max || y > max || z > max) {
      throw new RangeError(`Dispatch of ${d.kernel.name} with grid [${x}, ${y}, ${z}] exceeds ${max} per dimension`);
    }
    this.#kernels.add(d.kernel);
    if (d.buffers.length > d.kernel.slots) {
      throw new TypeError(`${d.kernel.name} declares ${d.kernel.slots} storage bindings, got ${d.buffers.length}`);
    }
    let unwritten = 0;
    const entries: GPUBindGroupEntry[] = d.kernel.storage.map(({ binding, writable }) => {
      const t = d.buffers[binding - 1];
      return { binding, resource: (t ?? (writable ? scratch(this.gpu, unwritten++) : placeholder(this.gpu))).binding };
    });
    if (d.kernel.params) {
      if (!d.params) throw new TypeError(`Dispatch of ${d.kernel.name} needs its uniform parameters`);
      entries.push({ binding: 0, resource: this.#uniform(d.kernel, d.params) });
    }
    const bindGroup = this.gpu.device.createBindGroup({ layout: d.kernel.bindGroupLayout, entries });
    const timed = this.timer?.next(d.label ?? d.kernel.name);
    if (timed) this.#endPass();
    const pass = this.#pass ?? this.encoder.beginComputePass(timed ? { timestampWrites: timed } : undefined);
    pass.setPipeline(d.kernel.pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(x, y, z);
    this.dispatches++;
    if (timed) pass.end();
    else this.#pass = pass;
  }

  /** Records a zero fill of a whole tensor. */
  clear(t: Tensor): void {
    this.#open();
    this.#endPass();
    this.encoder.clearBuffer(t.buffer, t.offset, t.bytes);
  }

  /** Records a copy of `src` into `dst` (same byte size). */
  copy(src: Tensor, dst: Tensor): void {
    this.#open();
    if (src.bytes !== dst.bytes) {
      throw new TypeError(`Cannot copy [${src.shape}] ${src.dtype} into [${dst.shape}] ${dst.dtype}: sizes differ`);
    }
    this.#endPass();
    this.encoder.copyBufferToBuffer(src.buffer, src.offset, dst.buffer, dst.offset, src.bytes);
  }

  /** Submits the recorded work. Rejects, naming the shader, if a kernel used here failed to build. */
  async submit(): Promise<void> {
    this.#open();
    this.#endPass();
    this.#flushChunk();
    this.#done = true;
    poolOf(this.gpu.device).endRecording();
    try {
      await Promise.all([...this.#kernels].map((k) => k.ready));
    } catch (err) {
      await this.gpu.device.popErrorScope();
      throw err;
    } finally {
      const spare = spareChunks.get(this.gpu.device) ?? [];
      spare.push(...this.#chunks);
      spareChunks.set(this.gpu.device, spare);
    }
    this.timer?.resolve(this.encoder);
    this.gpu.device.queue.submit([this.encoder.finish()]);
    const error = await this.gpu.device.popErrorScope();
    if (error) {
      const names = [...this.#kernels].map((k) => k.name).join(", ");
      throw new Error(`GPU validation failed in a batch using ${names}: ${error.message}`);
    }
  }

  /**
   * SYNC POINT (about 10 ms in Deno): copies `tensors` into one staging buffer, submits, and waits for the bytes.
   * Use once per step; batch every value you need into this one call. Kernel shapes that missed the autotuner's
   * table while recording are timed here, once per adapter and shape (src/gpu/tuner.ts).
   */
  async read(tensors: readonly Tensor[]): Promise<HostData[]> {
    this.#open();
    this.#endPass();
    const offsets: number[] = [];
    let total = 0;
    for (const t of tensors) {
      offsets.push(total);
      total += Math.ceil(t.bytes / 4) * 4;
    }
    const staging = this.gpu.device.createBuffer({
      size: Math.max(total, 4),
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    tensors.forEach((t, i) => this.encoder.copyBufferToBuffer(t.buffer, t.offset, staging, offsets[i], t.bytes));
    await this.submit();
    await staging.mapAsync(GPUMapMode.READ);
    const bytes = staging.getMappedRange().slice(0);
    staging.unmap();
    staging.destroy();
    await runPendingTuning(this.gpu);
    return tensors.map((t, i) => decodeHost(bytes.slice(offsets[i], offsets[i] + t.bytes), t.size, t.dtype));
  }

  #open(): void {
    if (this.#done) throw new Error("This batch was already submitted; start a new Batch");
  }

  #endPass(): void {
    this.#pass?.end();
    this.#pass = undefined;
  }

  #uniform(k: Kernel, params: Record<string, number>): GPUBufferBinding {
    const size = k.params!.bytes;
    let at = Math.ceil(this.#used / this.#align) * this.#align;
    if (!this.#chunk || at + size > CHUNK_BYTES) {
      this.#flushChunk();
      const spare = spareChunks.get(this.gpu.device)?.pop();
      this.#chunk = spare ?? this.gpu.device.createBuffer({
        size: CHUNK_BYTES,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      });
      this.#chunks.push(this.#chunk);
      this.#used = 0;
      at = 0;
    }
    k.params!.packInto(new DataView(this.#staging.buffer), at, params);
    this.#used = at + size;
    return { buffer: this.#chunk, offset: at, size };
  }

  #flushChunk(): void {
    if (!this.#chunk || this.#used === 0) return;
    this.gpu.device.queue.writeBuffer(this.#chunk, 0, this.#staging, 0, Math.ceil(this.#used / 4) * 4);
    this.#used = 0;
    this.#chunk = undefined;
  }
}

/** Workgroup grid for `count` workgroups, folded into y when x would pass the per-dimension limit. */
export function foldGrid(gpu: Gpu, count: number): [number, number] {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (count <= max) return [count, 1];
  const y = Math.ceil(count / max);
  return [Math.ceil(count / y), y];
}
