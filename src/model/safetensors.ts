/**
 * safetensors files: an 8-byte little-endian header length N, N bytes of JSON header (padded with spaces so the
 * data starts 8-byte aligned, as Hugging Face writes it), then the raw little-endian tensor bytes. The header maps
 * each name to `{dtype, shape, data_offsets: [begin, end]}` (offsets relative to the data start) beside an optional
 * `__metadata__` of strings.
 *
 * Reading converts F32, F16, BF16 (and F64) to Float32Array; writing produces F32, F16 or BF16 (rounded to nearest,
 * ties to even), so a model read and written in its own dtype comes back bit for bit. Every entry is validated
 * before any tensor is converted, so a corrupt file throws a SyntaxError naming the file and the tensor and nothing
 * is half-loaded. Assumes a little-endian host (every WebGPU platform is).
 */

/** A tensor on the host: row-major f32 values and their shape. */
export interface HostTensor {
  /** The tensor's shape. */
  shape: number[];
  /** Its values, row-major. */
  data: Float32Array;
  /** The dtype the file stored it in (F64 reads as f32); absent for tensors made in memory. */
  stored?: SaveDType;
}

/** Storage dtypes Crucible writes. */
export type SaveDType = "f32" | "f16" | "bf16";

const BYTES: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2 };
/** Every dtype the format defines, to tell an unsupported dtype (TypeError) from a malformed one (SyntaxError). */
const KNOWN = new Set([
  "BOOL",
  "U8",
  "I8",
  "F8_E4M3",
  "F8_E5M2",
  "I16",
  "U16",
  "I32",
  "U32",
  "I64",
  "U64",
  ...Object.keys(BYTES),
]);
/** Header larger than this is taken as a corrupt length (the Rust reader's limit is 100 MB). */
const MAX_HEADER = 100_000_000;

interface Entry {
  name: string;
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
}

/**
 * Parses a whole safetensors file held in memory. `file` names it in errors.
 *
 * @example
 * ```ts
 * const { tensors } = parseSafetensors(await Deno.readFile("model.safetensors"), "model.safetensors");
 * ```
 */
export function parseSafetensors(
  bytes: Uint8Array,
  file = "<bytes>",
): { tensors: Map<string, HostTensor>; metadata: Record<string, string> } {
  const bad = (what: string) => new SyntaxError(`Reading safetensors ${file}: ${what}`);
  if (bytes.byteLength < 8) throw bad(`file is ${bytes.byteLength} bytes, shorter than the 8-byte header length`);
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (n < 2 || n > MAX_HEADER || 8 + n > bytes.byteLength) {
    throw bad(`header length ${n} does not fit in a ${bytes.byteLength}-byte file (truncated or not safetensors)`);
  }
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (e) {
    throw bad(`header is not valid JSON (${(e as Error).message})`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw bad("header is not a JSON object");
  const dataStart = 8 + n, dataLength = bytes.byteLength - dataStart;
  const metadata: Record<string, string> = {};
  const entries: Entry[] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === "__metadata__") {
      for (const [k, v] of Object.entries(raw ?? {})) {
        if (typeof v !== "string") throw bad(`__metadata__.${k} is not a string`);
        metadata[k] = v;
      }
      continue;
    }
    entries.push(checkEntry(name, raw, dataLength, bad));
  }
  // Sorted by offset, each tensor must start at or after the previous one's end: overlaps mean corruption.
  // Empty tensors occupy no bytes and overlap nothing.
  const sorted = entries.filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].begin < sorted[i - 1].end) {
      throw bad(`tensor "${sorted[i].name}" overlaps tensor "${sorted[i - 1].name}"`);
    }
  }
  // Everything is valid: only now convert.
  const tensors = new Map<string, HostTensor>();
  for (const e of entries) {
    const stored = e.dtype === "F16" ? "f16" : e.dtype === "BF16" ? "bf16" : "f32";
    tensors.set(e.name, { shape: e.shape, data: toF32(bytes, dataStart + e.begin, e), stored });
  }
  return { tensors, metadata };
}

function checkEntry(name: string, raw: unknown, dataLength: number, bad: (w: string) => SyntaxError): Entry {
  const r = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | null;
  if (typeof r !== "object" || r === null) throw bad(`tensor "${name}" has no {dtype, shape, data_offsets} entry`);
  const { dtype, shape, data_offsets: off } = r;
  if (typeof dtype !== "string" || !KNOWN.has(dtype)) throw bad(`tensor "${name}" has unknown dtype ${dtype}`);
  if (!BYTES[dtype]) {
    throw new TypeError(`Tensor "${name}" has dtype ${dtype}; Crucible reads only F32, F16, BF16 and F64`);
  }
  const isDim = (d: unknown) => Number.isSafeInteger(d) && (d as number) >= 0;
  if (!Array.isArray(shape) || !shape.every(isDim)) {
    throw bad(`tensor "${name}" has invalid shape ${JSON.stringify(shape)}`);
  }
  if (!Array.isArray(off) || off.length !== 2 || !off.every(isDim) || off[0] > off[1]) {
    throw bad(`tensor "${name}" has invalid data_offsets ${JSON.stringify(off)}`);
  }
  const [begin, end] = off as number[];
  if (end > dataLength) {
    throw bad(
      `tensor "${name}" data_offsets [${begin}, ${end}] run past the ${dataLength} data bytes (truncated file?)`,
    );
  }
  const expected = shape.reduce((a: number, b: number) => a * b, 1) * BYTES[dtype];
  if (end - begin !== expected) {
    throw bad(`tensor "${name}" holds ${end - begin} bytes but ${dtype} ${JSON.stringify(shape)} needs ${expected}`);
  }
  return { name, dtype, shape: shape as number[], begin, end };
}

/** Converts one validated tensor. F32 at a 4-aligned offset is a zero-copy view of the file's buffer. */
function toF32(bytes: Uint8Array, at: number, e: Entry): Float32Array {
  const count = (e.end - e.begin) / BYTES[e.dtype];
  const abs = bytes.byteOffset + at;
  const aligned = abs % BYTES[e.dtype] === 0;
  // Unaligned data (after an odd number of 2-byte elements, say) is copied once to an aligned buffer. The copy goes
  // through Uint8Array's own slice: a Node Buffer's slice is a view, which would keep the misalignment.
  const buf = aligned ? bytes.buffer : Uint8Array.prototype.slice.call(bytes, at, at + e.end - e.begin).buffer;
  const off = aligned ? abs : 0;
  switch (e.dtype) {
    case "F32":
      return new Float32Array(buf, off, count);
    case "F64":
      return Float32Array.from(new Float64Array(buf, off, count));
    case "F16":
      return Float32Array.from(new Float16Array(buf, off, count));
    default: { // BF16: the high half of an f32
      const src = new Uint16Array(buf, off, count);
      const out = new Uint32Array(count);
      for (let i = 0; i < count; i++) out[i] = src[i] << 16;
      return new Float32Array(out.buffer);
    }
  }
}

/**
 * Serialises tensors in iteration order as a safetensors file with `__metadata__` `{"format": "pt"}`.
 *
 * @example
 * ```ts
 * const bytes = serializeSafetensors(new Map([["w", { shape: [2], data: new Float32Array([1, 2]) }]]), { dtype: "f16" });
 * ```
 */
export function serializeSafetensors(
  tensors: Iterable<readonly [string, HostTensor]>,
  opts: { dtype?: SaveDType; metadata?: Record<string, string> } = {},
): Uint8Array {
  const dtype = opts.dtype ?? "f32";
  if (!["f32", "f16", "bf16"].includes(dtype)) throw new RangeError(`Cannot write safetensors as ${dtype}`);
  const size = dtype === "f32" ? 4 : 2;
  const header: Record<string, unknown> = { __metadata__: { format: "pt", ...opts.metadata } };
  const list = [...tensors];
  let offset = 0;
  for (const [name, t] of list) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length) {
      throw new TypeError(`Tensor "${name}" has ${t.data.length} values but shape [${t.shape}] needs ${count}`);
    }
    header[name] = { dtype: dtype.toUpperCase(), shape: t.shape, data_offsets: [offset, offset + count * size] };
    offset += count * size;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8; // spaces keep the data 8-byte aligned, as Hugging Face does
  const out = new Uint8Array(8 + padded + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(padded), true);
  out.fill(0x20, 8, 8 + padded);
  out.set(json, 8);
  let at = 8 + padded;
  for (const [, t] of list) {
    const values = dtype === "f32" ? t.data : dtype === "f16" ? Float16Array.from(t.data) : toBf16(t.data);
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at);
    at += values.byteLength;
  }
  return out;
}

/** f32 to bf16, rounded to nearest with ties to even; NaN stays a (quiet) NaN. */
function toBf16(x: Float32Array): Uint16Array {
  const bits = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const out = new Uint16Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const b = bits[i];
    out[i] = Number.isNaN(x[i]) ? (b >>> 16) | 0x40 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return out;
}

/** The Hugging Face name of a sharded checkpoint's index. */
export const SHARD_INDEX = "model.safetensors.index.json";

/**
 * Loads a `.safetensors` file, or a sharded checkpoint through its `model.safetensors.index.json` (only the
 * tensors its `weight_map` names, each from its shard). One read per file; all files validate before returning.
 *
 * @example
 * ```ts
 * const tensors = await loadSafetensors("Qwen2.5-0.5B/model.safetensors");
 * ```
 */
export async function loadSafetensors(path: string): Promise<Map<string, HostTensor>> {
  if (!path.endsWith(".json")) return parseSafetensors(await Deno.readFile(path), path).tensors;
  let map: Record<string, unknown>;
  try {
    map = JSON.parse(await Deno.readTextFile(path)).weight_map;
  } catch (e) {
    throw new SyntaxError(`Reading safetensors index ${path}: ${(e as Error).message}`);
  }
  if (typeof map !== "object" || map === null) throw new SyntaxError(`Reading ${path}: no "weight_map" object`);
  const dir = path.slice(0, path.lastIndexOf("/") + 1);
  const shards = new Map<string, Map<string, HostTensor>>();
  const out = new Map<string, HostTensor>();
  for (const [name, shard] of Object.entries(map)) {
    if (typeof shard !== "string" || shard.includes("/") || shard.includes("\\")) {
      throw new SyntaxError(`Reading ${path}: tensor "${name}" maps to ${JSON.stringify(shard)}, not a file name`);
    }
    if (!shards.has(shard)) shards.set(shard, await loadSafetensors(dir + shard));
    const t = shards.get(shard)!.get(name);
    if (!t) throw new SyntaxError(`Reading ${dir + shard}: tensor "${name}" named in ${path} is missing from it`);
    out.set(name, t);
  }
  return out;
}

/** Writes tensors to a safetensors file (see serializeSafetensors). */
export async function saveSafetensors(
  path: string,
  tensors: Iterable<readonly [string, HostTensor]>,
  opts: { dtype?: SaveDType } = {},
): Promise<void> {
  await Deno.writeFile(path, serializeSafetensors(tensors, opts));
}
