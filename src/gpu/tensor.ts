/**
 * Tensors: a shape, a dtype and a byte range of a GPU buffer. Row-major, last dimension contiguous.
 */
import type { Gpu } from "./device.ts";
import { poolOf } from "./pool.ts";

/** Element types a kernel can read or write. f16 needs the `shader-f16` feature in kernels that use it. */
export type DType = "f32" | "f16" | "i32" | "u32";

/** Bytes per element. */
export const DTYPE_BYTES: Record<DType, number> = { f32: 4, f16: 2, i32: 4, u32: 4 };

/** Host arrays accepted for upload; f16 data may come as Float32Array or Float64Array (rounded on upload). */
export type HostArray = Float32Array | Float64Array | Float16Array | Int32Array | Uint32Array | number[];

/** A typed view of a tensor's data on the host: f32 and f16 read back as Float32Array. */
export type HostData = Float32Array | Int32Array | Uint32Array;

/** Number of elements of a shape; throws on negative or fractional sizes. */
export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new RangeError(`Invalid tensor shape [${shape}]: sizes must be integers >= 0`);
    }
    n *= d;
  }
  return n;
}

/** Bytes a binding of `count` elements of `dtype` occupies, rounded up to 4 (bindings are 4-byte aligned). */
export function bindingBytes(count: number, dtype: DType): number {
  return Math.max(4, Math.ceil((count * DTYPE_BYTES[dtype]) / 4) * 4);
}

/** A typed byte range of a GPU buffer. Views share their parent's buffer and are never released themselves. */
export class Tensor {
  #released = false;

  /**
   * A tensor over `buffer` from byte `offset`; `owned` tensors give their buffer back to the pool on release (empty,
   * zeros and fromHost make them).
   */
  constructor(
    readonly gpu: Gpu,
    readonly buffer: GPUBuffer,
    readonly shape: readonly number[],
    readonly dtype: DType,
    readonly offset = 0,
    readonly owned = true,
  ) {}

  /** Element count. */
  get size(): number {
    return sizeOf(this.shape);
  }

  /** Bytes of the binding (element bytes rounded up to 4). */
  get bytes(): number {
    return bindingBytes(this.size, this.dtype);
  }

  /** The binding resource for a bind group. */
  get binding(): GPUBufferBinding {
    return { buffer: this.buffer, offset: this.offset, size: this.bytes };
  }

  /** A view of `count` elements starting at element `start`, with a new shape. Offsets must meet the adapter's alignment. */
  view(start: number, shape: readonly number[]): Tensor {
    const offset = this.offset + start * DTYPE_BYTES[this.dtype];
    const align = this.gpu.limits.minStorageBufferOffsetAlignment;
    if (offset % align !== 0) {
      throw new RangeError(
        `Tensor view at byte ${offset} is not a multiple of the adapter's storage alignment ${align}`,
      );
    }
    if (start + sizeOf(shape) > this.size) {
      throw new RangeError(`Tensor view [${start}, +${sizeOf(shape)}) is outside a tensor of ${this.size} elements`);
    }
    return new Tensor(this.gpu, this.buffer, shape, this.dtype, offset, false);
  }

  /** The same bytes with another shape of equal size. */
  reshape(shape: readonly number[]): Tensor {
    if (sizeOf(shape) !== this.size) {
      throw new TypeError(`Cannot reshape [${this.shape}] (${this.size} elements) to [${shape}]`);
    }
    return new Tensor(this.gpu, this.buffer, shape, this.dtype, this.offset, false);
  }

  /** Returns the buffer to the pool. Safe to call twice; views ignore it. */
  release(): void {
    if (!this.owned || this.#released) return;
    this.#released = true;
    poolOf(this.gpu.device).release(this.buffer);
  }
}

/**
 * An uninitialised tensor from the pool. `gpuOnly` promises that only the open batch's dispatches touch it (no
 * `write`, no `zeros`), which lets it reuse a buffer released earlier in the same batch.
 */
export function empty(
  gpu: Gpu,
  shape: readonly number[],
  dtype: DType = "f32",
  label?: string,
  gpuOnly = false,
): Tensor {
  const size = sizeOf(shape);
  const buffer = poolOf(gpu.device).acquire(bindingBytes(size, dtype), label, gpuOnly);
  return new Tensor(gpu, buffer, [...shape], dtype);
}

/** A zero-filled tensor (the clear is queued; no wait). */
export function zeros(gpu: Gpu, shape: readonly number[], dtype: DType = "f32", label?: string): Tensor {
  const t = empty(gpu, shape, dtype, label);
  const encoder = gpu.device.createCommandEncoder();
  encoder.clearBuffer(t.buffer, t.offset, t.bytes);
  gpu.device.queue.submit([encoder.finish()]);
  return t;
}

/** Converts host data to the bytes of `dtype`. */
export function encodeHost(data: HostArray, dtype: DType): Uint8Array<ArrayBuffer> {
  let typed: ArrayBufferView<ArrayBuffer>;
  switch (dtype) {
    case "f32":
      typed = data instanceof Float32Array
        ? data as Float32Array<ArrayBuffer>
        : Float32Array.from(data as ArrayLike<number>);
      break;
    case "f16":
      typed = data instanceof Float16Array
        ? data as Float16Array<ArrayBuffer>
        : Float16Array.from(data as ArrayLike<number>);
      break;
    case "i32":
      typed = data instanceof Int32Array ? data as Int32Array<ArrayBuffer> : Int32Array.from(data as ArrayLike<number>);
      break;
    case "u32":
      typed = data instanceof Uint32Array
        ? data as Uint32Array<ArrayBuffer>
        : Uint32Array.from(data as ArrayLike<number>);
      break;
  }
  return new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
}

/** Uploads host data into a new tensor. */
export function fromHost(gpu: Gpu, data: HostArray, shape: readonly number[], dtype: DType = "f32"): Tensor {
  const size = sizeOf(shape);
  if (data.length !== size) {
    throw new TypeError(`Cannot upload ${data.length} values into a tensor of shape [${shape}] (${size} elements)`);
  }
  const t = empty(gpu, shape, dtype);
  write(t, data);
  return t;
}

/** Overwrites a tensor's contents from the host (queued before the next submit). */
export function write(t: Tensor, data: HostArray): void {
  if (data.length !== t.size) {
    throw new TypeError(`Cannot write ${data.length} values into a tensor of shape [${t.shape}]`);
  }
  if (data.length === 0) return; // a zero-byte writeBuffer panics in Deno's queue
  const bytes = encodeHost(data, t.dtype);
  // writeBuffer needs a multiple of 4 bytes; pad odd f16 counts.
  const padded = bytes.byteLength % 4 === 0 ? bytes : (() => {
    const p = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
    p.set(bytes);
    return p;
  })();
  t.gpu.device.queue.writeBuffer(t.buffer, t.offset, padded);
}

/** Decodes bytes read from the GPU into a host array for `dtype` (f16 widened to f32). */
export function decodeHost(bytes: ArrayBuffer, count: number, dtype: DType): HostData {
  switch (dtype) {
    case "f32":
      return new Float32Array(bytes, 0, count).slice();
    case "f16":
      return Float32Array.from(new Float16Array(bytes, 0, count));
    case "i32":
      return new Int32Array(bytes, 0, count).slice();
    case "u32":
      return new Uint32Array(bytes, 0, count).slice();
  }
}

const placeholders = new WeakMap<GPUDevice, Tensor[]>();
const scratches = new WeakMap<GPUDevice, Tensor[]>();

function small(gpu: Gpu, cache: WeakMap<GPUDevice, Tensor[]>, label: string, index: number): Tensor {
  let list = cache.get(gpu.device);
  if (!list) cache.set(gpu.device, list = []);
  let t = list[index];
  if (!t) {
    const buffer = gpu.device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE, label });
    t = list[index] = new Tensor(gpu, buffer, [64], "f32", 0, false);
  }
  return t;
}

/** A small tensor to bind to a read-only binding that a kernel does not read (an optional input switched off). */
export function placeholder(gpu: Gpu): Tensor {
  return small(gpu, placeholders, "placeholder", 0);
}

/**
 * A small tensor to bind to a writable binding an entry point does not write, the `index`-th of a dispatch: WebGPU
 * refuses one buffer bound both read-only and writable in a dispatch, and browsers refuse one bound to two writable
 * bindings, so each unwritten writable binding of a dispatch gets its own.
 */
export function scratch(gpu: Gpu, index = 0): Tensor {
  return small(gpu, scratches, "scratch", index);
}
