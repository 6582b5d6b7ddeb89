/**
 * Tensors too large for one buffer. A tensor whose bytes pass the device's tensor limit (Gpu.tensorLimit: the
 * adapter's storage-binding and buffer limits, or a smaller one asked for in tests) is split along its first
 * dimension into consecutive row ranges, each its own buffer; kernels take the parts one at a time (a row offset
 * each) and nothing joins them on the GPU. A tensor that fits is one plain Tensor, exactly as without splitting.
 *
 * Parts hold a multiple of 64 rows where the limit allows it: with a row width that is a multiple of 64 (Qwen's
 * 896, ...), every part starts on a 4096-element boundary, so the gradient norm's chunks fall as in the whole tensor.
 */
import { Batch } from "./batch.ts";
import type { Gpu } from "./device.ts";
import {
  bindingBytes,
  type DType,
  DTYPE_BYTES,
  fromHost,
  type HostArray,
  type HostData,
  sizeOf,
  Tensor,
  write,
  zeros,
} from "./tensor.ts";

/** One row range of a split tensor: rows [start, start + rows) of the whole, in `tensor` [rows, ...]. */
export interface RowPart {
  /** The whole's first row this part holds. */
  start: number;
  /** How many rows it holds. */
  rows: number;
  /** The part's own tensor [rows, ...]. */
  tensor: Tensor;
}

/** A tensor held as consecutive row ranges of its first dimension, each in its own buffer. */
export class SplitTensor {
  /** A split tensor of `shape` and `dtype` from its parts, in row order (rowParts of a StoredTensor makes them). */
  constructor(
    readonly gpu: Gpu,
    readonly shape: readonly number[],
    readonly dtype: DType,
    readonly parts: readonly RowPart[],
  ) {}

  /** Element count of the whole. */
  get size(): number {
    return sizeOf(this.shape);
  }

  /** Bytes of all parts' bindings. */
  get bytes(): number {
    return this.parts.reduce((n, p) => n + p.tensor.bytes, 0);
  }

  /** Returns every part's buffer to the pool. */
  release(): void {
    for (const p of this.parts) p.tensor.release();
  }
}

/** A tensor as stored: one buffer, or row parts. */
export type StoredTensor = Tensor | SplitTensor;

/** Row ranges of a stored tensor: a plain tensor is one part of all its rows. */
export function rowParts(t: StoredTensor): readonly RowPart[] {
  return t instanceof SplitTensor ? t.parts : [{ start: 0, rows: t.shape[0] ?? 1, tensor: t }];
}

/**
 * Rows per part of a [rows, ...] tensor whose rows take `rowBytes` each, within `limit` bytes a part: [rows] when
 * the whole fits, else parts of a multiple of 64 rows where a part holds at least 64 (the last one shorter).
 */
export function splitRows(rows: number, rowBytes: number, limit: number, what = "A tensor"): number[] {
  if (rows * rowBytes <= limit) return [rows];
  let per = Math.floor(limit / rowBytes);
  if (per < 1) {
    throw new RangeError(
      `${what} has rows of ${rowBytes} bytes, more than the GPU's tensor limit of ${limit} bytes: it cannot be ` +
        "split by rows; a GPU with a larger maxStorageBufferBindingSize is needed",
    );
  }
  if (per >= 64) per -= per % 64;
  const out: number[] = [];
  for (let left = rows; left > 0; left -= per) out.push(Math.min(per, left));
  return out;
}

/** Bytes of one row (the trailing dimensions) of a shape in a dtype. */
function rowBytes(shape: readonly number[], dtype: DType): number {
  return sizeOf(shape.slice(1)) * DTYPE_BYTES[dtype];
}

/** The rows per part of a shape on this GPU, checking that a whole tensor fits when it is not split. */
export function partRows(gpu: Gpu, shape: readonly number[], dtype: DType, what?: string): number[] {
  if (shape.length === 0) return [1];
  const whole = bindingBytes(sizeOf(shape), dtype);
  if (whole <= gpu.tensorLimit) return [shape[0]];
  return splitRows(shape[0], rowBytes(shape, dtype), gpu.tensorLimit, what);
}

/** Builds the parts of a shape from a constructor of one part [rows, ...]. */
function build(
  gpu: Gpu,
  shape: readonly number[],
  dtype: DType,
  make: (start: number, partShape: number[]) => Tensor,
  what?: string,
): StoredTensor {
  const counts = partRows(gpu, shape, dtype, what);
  if (counts.length === 1) return make(0, [...shape]);
  const parts: RowPart[] = [];
  let start = 0;
  for (const rows of counts) {
    parts.push({ start, rows, tensor: make(start, [rows, ...shape.slice(1)]) });
    start += rows;
  }
  return new SplitTensor(gpu, [...shape], dtype, parts);
}

/** A zero-filled tensor, split by rows when it passes the GPU's tensor limit. */
export function zerosStored(gpu: Gpu, shape: readonly number[], dtype: DType = "f32", label?: string): StoredTensor {
  return build(gpu, shape, dtype, (_, s) => zeros(gpu, s, dtype, label), label);
}

/**
 * Uploads host data, split by rows when it passes the GPU's tensor limit (each part from a subarray: no copy on
 * the host beyond the dtype conversion).
 */
export function storedFromHost(
  gpu: Gpu,
  data: HostArray,
  shape: readonly number[],
  dtype: DType = "f32",
  what?: string,
): StoredTensor {
  const size = sizeOf(shape);
  if (data.length !== size) {
    throw new TypeError(`Cannot upload ${data.length} values into a tensor of shape [${shape}] (${size} elements)`);
  }
  const width = size / Math.max(shape[0] ?? 1, 1);
  return build(gpu, shape, dtype, (start, s) => fromHost(gpu, slice(data, start * width, sizeOf(s)), s, dtype), what);
}

/** Overwrites a stored tensor's contents from the host (queued before the next submit). */
export function writeStored(t: StoredTensor, data: HostArray): void {
  if (t instanceof Tensor) return write(t, data);
  if (data.length !== t.size) {
    throw new TypeError(`Cannot write ${data.length} values into a tensor of shape [${t.shape}]`);
  }
  const width = t.size / t.shape[0];
  for (const p of t.parts) write(p.tensor, slice(data, p.start * width, p.rows * width));
}

function slice(data: HostArray, start: number, count: number): HostArray {
  return Array.isArray(data) ? data.slice(start, start + count) : data.subarray(start, start + count);
}

/** Bytes staged per readback of {@linkcode readStored}: large sets are read in several. */
const READ_BYTES = 256 * 1024 * 1024;

/**
 * SYNC POINTS: reads stored tensors back, split ones joined on the host. One readback while everything fits
 * `stagingBytes` (default 256 MiB, within the adapter's buffer limit), else one per group of parts that does.
 */
export async function readStored(
  gpu: Gpu,
  tensors: readonly StoredTensor[],
  o: { stagingBytes?: number } = {},
): Promise<HostData[]> {
  const parts = tensors.flatMap((t, i) => rowParts(t).map((p) => ({ i, p })));
  const cap = Math.min(o.stagingBytes ?? READ_BYTES, gpu.limits.maxBufferSize);
  const data: HostData[][] = tensors.map(() => []);
  for (let at = 0; at < parts.length;) {
    let bytes = 0, end = at;
    while (end < parts.length && (end === at || bytes + parts[end].p.tensor.bytes <= cap)) {
      bytes += parts[end++].p.tensor.bytes;
    }
    const group = parts.slice(at, end);
    const read = await new Batch(gpu).read(group.map((g) => g.p.tensor));
    group.forEach((g, k) => data[g.i].push(read[k]));
    at = end;
  }
  return tensors.map((t, i) => (t instanceof Tensor ? data[i][0] : join(data[i], t.size)));
}

function join(parts: HostData[], size: number): HostData {
  const out = new (parts[0].constructor as Float32ArrayConstructor)(size);
  let at = 0;
  for (const p of parts) {
    out.set(p as Float32Array, at);
    at += p.length;
  }
  return out;
}
