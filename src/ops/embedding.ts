/**
 * Embedding lookup and its deterministic backward (WGSL has no float atomics: the host buckets positions by id).
 * A table split by rows (src/gpu/split.ts) is one dispatch per part, each for the ids in its rows.
 */
import forwardSource from "../../shaders/embedding_forward.wgsl" with { type: "text" };
import backwardSource from "../../shaders/embedding_backward.wgsl" with { type: "text" };
import { type Batch, foldGrid } from "../gpu/batch.ts";
import { kernel, type Shader } from "../gpu/pipeline.ts";
import { rowParts, type StoredTensor } from "../gpu/split.ts";
import { fromHost, type Tensor } from "../gpu/tensor.ts";
import { uniforms } from "../gpu/uniforms.ts";

const FORWARD_SHADER: Shader = { name: "embedding_forward", source: forwardSource };
const BACKWARD_SHADER: Shader = { name: "embedding_backward", source: backwardSource };

const FORWARD = uniforms([["T", "u32"], ["C", "u32"], ["start", "u32"], ["rows", "u32"]] as const);
const BACKWARD = uniforms([["U", "u32"], ["C", "u32"], ["first", "u32"], ["start", "u32"]] as const);

/** Positions grouped by token id: the host side of the deterministic embedding backward. */
export interface EmbeddingBuckets {
  /** Distinct ids, ascending. [U] */
  tokens: Uint32Array;
  /** Start of each id's positions in `order`, plus the end. [U + 1] */
  offsets: Uint32Array;
  /** Positions t grouped by id, ascending within an id. [T] */
  order: Uint32Array;
}

/** Groups positions by id (a counting sort; O(T log T) for the distinct ids). */
export function embeddingBuckets(ids: ArrayLike<number>): EmbeddingBuckets {
  const byId = new Map<number, number[]>();
  for (let t = 0; t < ids.length; t++) {
    const list = byId.get(ids[t]);
    if (list) list.push(t);
    else byId.set(ids[t], [t]);
  }
  const tokens = Uint32Array.from([...byId.keys()].sort((a, b) => a - b));
  const offsets = new Uint32Array(tokens.length + 1);
  const order = new Uint32Array(ids.length);
  let at = 0;
  tokens.forEach((id, u) => {
    offsets[u] = at;
    for (const t of byId.get(id)!) order[at++] = t;
  });
  offsets[tokens.length] = at;
  return { tokens, offsets, order };
}

function checkIds(ids: Tensor, table: StoredTensor): [number, number, number] {
  if (ids.dtype !== "u32") throw new TypeError(`Embedding ids must be u32, got ${ids.dtype}`);
  if (table.shape.length !== 2) throw new TypeError(`Embedding table must be [V, C], got [${table.shape}]`);
  return [ids.size, table.shape[0], table.shape[1]];
}

/**
 * Records out [T, C] = E[ids]. The table [V, C] may be f32 or f16, whole or split by rows; ids must be < V (not
 * checked on the GPU: the rows of larger ids are left unwritten).
 */
export function embeddingForward(batch: Batch, ids: Tensor, table: StoredTensor, out: Tensor): void {
  const [T, , C] = checkIds(ids, table);
  if (out.size !== T * C || out.dtype !== "f32") {
    throw new TypeError(`Embedding output must be [${T}, ${C}] f32, got [${out.shape}] ${out.dtype}`);
  }
  const f16 = table.dtype === "f16";
  const k = kernel(batch.gpu, FORWARD_SHADER, {
    params: FORWARD,
    template: { ENABLE: f16 ? "enable f16;" : "", ET: table.dtype },
  });
  for (const part of rowParts(table)) {
    batch.dispatch({
      kernel: k,
      buffers: [ids, part.tensor, out],
      params: { T, C, start: part.start, rows: part.rows },
      grid: foldGrid(batch.gpu, Math.ceil((T * C) / 64)),
    });
  }
}

/**
 * Records dE [V, C] += scatter of dOut [T, C] by id, from host-side buckets of the same ids; a gradient split by
 * rows gets one dispatch per part that the batch's ids reach. The three small bucket tensors are uploaded here and
 * released after the batch is submitted.
 */
export function embeddingBackward(
  batch: Batch,
  buckets: EmbeddingBuckets,
  dOut: Tensor,
  dTable: StoredTensor,
): void {
  const U = buckets.tokens.length;
  const C = dTable.shape[dTable.shape.length - 1];
  if (dOut.size !== buckets.order.length * C) {
    throw new TypeError(`Embedding gradient [${dOut.shape}] does not match ${buckets.order.length} ids of width ${C}`);
  }
  if (U === 0) return;
  const gpu = batch.gpu;
  const tokens = fromHost(gpu, buckets.tokens, [U], "u32");
  const offsets = fromHost(gpu, buckets.offsets, [U + 1], "u32");
  const order = fromHost(gpu, buckets.order, [buckets.order.length], "u32");
  const k = kernel(gpu, BACKWARD_SHADER, { params: BACKWARD });
  let first = 0; // buckets.tokens ascends: each part's ids are the next run of them
  for (const part of rowParts(dTable)) {
    let end = first;
    while (end < U && buckets.tokens[end] < part.start + part.rows) end++;
    if (end > first) {
      batch.dispatch({
        kernel: k,
        buffers: [dOut, tokens, offsets, order, part.tensor],
        params: { U: end - first, C, first, start: part.start },
        grid: foldGrid(gpu, end - first),
      });
    }
    first = end;
  }
  // Safe while recording: the pool hands these buffers out again only after this batch is submitted.
  for (const t of [tokens, offsets, order]) t.release();
}
