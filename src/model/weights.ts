/**
 * A set of GPU tensors shaped by the parameter table: the parameters themselves, and likewise their gradients
 * and the optimizer's moments. One tensor per Hugging Face name.
 *
 * The model's matrices (embedding, projections, LM head) past the GPU's tensor limit are split by rows
 * (src/gpu/split.ts); their gradients and f32 moments split alike, so the optimizer pairs the parts. Everything
 * else (norms, biases, a value head, LoRA's A and B) is small and stays whole: one past the limit is refused.
 */
import type { Batch } from "../gpu/batch.ts";
import { type Gpu, TENSOR_LIMIT_ENV } from "../gpu/device.ts";
import {
  partRows,
  readStored,
  rowParts,
  SplitTensor,
  storedFromHost,
  type StoredTensor,
  zerosStored,
} from "../gpu/split.ts";
import { bindingBytes, type DType, type HostArray, sizeOf, type Tensor, write, zeros } from "../gpu/tensor.ts";
import type { ModelConfig } from "./config.ts";
import { type ParamSpec, paramTable } from "./params.ts";
import { decoderPlan } from "./plan.ts";

/**
 * GPU tensors by Hugging Face name, in table order. The table is the model's (paramTable) unless another is given:
 * a LoRA adapter's (loraTable), whose gradients and moments are then sets over the same table.
 */
export class TensorSet {
  /** The tensors by name, in table order. */
  readonly tensors = new Map<string, StoredTensor>();

  /** A set over `specs` (default the model's table) whose tensors `fill` makes, one per spec. */
  constructor(
    readonly gpu: Gpu,
    readonly config: ModelConfig,
    fill: (spec: ParamSpec) => StoredTensor,
    readonly specs: ParamSpec[] = paramTable(config),
    /**
     * The arena the tensors are views of, when they are (see the module header).
     *
     * @ignore
     */
    readonly arena?: Arena,
  ) {
    for (const spec of this.specs) this.tensors.set(spec.name, fill(spec));
  }

  /** A set of zero f32 tensors with the table's shapes (gradients, moments), in an arena where one fits. */
  static zeros(gpu: Gpu, config: ModelConfig, specs?: ParamSpec[]): TensorSet {
    const table = specs ?? paramTable(config);
    const arena = newArena(gpu, table);
    if (arena) return new TensorSet(gpu, config, (s) => arena.view(s), table, arena);
    return new TensorSet(gpu, config, (s) => zerosStored(gpu, checkFits(gpu, s, "f32"), "f32", s.name), table);
  }

  /**
   * Uploads host tensors; every table entry must be present with its exact element count. `dtype` picks each
   * tensor's storage (default f32; f16 is rounded to nearest on upload). An all-f32 set goes into an arena where
   * one fits.
   */
  static fromHost(
    gpu: Gpu,
    config: ModelConfig,
    host: ReadonlyMap<string, Float32Array>,
    o: { specs?: ParamSpec[]; dtype?: (spec: ParamSpec, data: Float32Array) => DType } = {},
  ): TensorSet {
    const table = o.specs ?? paramTable(config);
    const entries = new Map(table.map((s) => {
      const data = host.get(s.name);
      const size = s.shape.reduce((a, b) => a * b, 1);
      if (!data) throw new TypeError(`Parameter ${s.name} [${s.shape}] is missing`);
      if (data.length !== size) {
        throw new TypeError(`Parameter ${s.name} has ${data.length} values but its shape [${s.shape}] needs ${size}`);
      }
      return [s.name, { data, dtype: o.dtype?.(s, data) ?? "f32" }];
    }));
    const arena = [...entries.values()].every((e) => e.dtype === "f32") ? newArena(gpu, table) : undefined;
    const fill = (s: ParamSpec): StoredTensor => {
      const e = entries.get(s.name)!;
      if (!arena) return uploadParam(gpu, s, e.data, e.dtype);
      const view = arena.view(s);
      write(view, e.data);
      return view;
    };
    return new TensorSet(gpu, config, fill, table, arena);
  }

  /** A tensor that is never split (a norm, a bias, an adapter's A or B); throws a RangeError naming it when absent. */
  get(name: string): Tensor {
    return whole(name, this.stored(name));
  }

  /** As {@linkcode get}, or undefined: a gradient set holds only what trains (a LoRA run: the adapters). */
  find(name: string): Tensor | undefined {
    const t = this.tensors.get(name);
    return t && whole(name, t);
  }

  /** A tensor as stored, whole or split by rows (the model's matrices); throws a RangeError when absent. */
  stored(name: string): StoredTensor {
    const t = this.tensors.get(name);
    if (!t) throw new RangeError(`No tensor named ${name} in this model`);
    return t;
  }

  /** As {@linkcode stored}, or undefined when the set does not hold it. */
  findStored(name: string): StoredTensor | undefined {
    return this.tensors.get(name);
  }

  /** The output projection: lm_head, or the embedding when tied. */
  get head(): StoredTensor {
    return this.stored(decoderPlan(this.config).head);
  }

  /** Records zero fills of every tensor (of each arena chunk at once). */
  clear(batch: Batch): void {
    if (this.arena) { for (const c of this.arena.chunks) batch.clear(c); }
    else for (const t of this.tensors.values()) for (const p of rowParts(t)) batch.clear(p.tensor);
  }

  /** SYNC POINT: reads every tensor back (one readback while they fit 256 MiB of staging, see readStored). */
  async toHost(): Promise<Map<string, Float32Array>> {
    const names = [...this.tensors.keys()];
    const data = await readStored(this.gpu, names.map((n) => this.stored(n)));
    return new Map(names.map((n, i) => [n, data[i] as Float32Array]));
  }

  /** Returns every buffer to the pool. */
  release(): void {
    for (const t of this.tensors.values()) t.release();
    for (const c of this.arena?.chunks ?? []) c.release();
    this.tensors.clear();
  }
}

/** Where an arena puts each tensor of a table: every chunk's size, and each tensor's chunk and element offset. */
export interface ArenaLayout {
  /** Elements of each chunk (one buffer each). */
  chunks: number[];
  /** Per chunk, the element where tensors without weight decay begin (all decayed ones sit before it). */
  decayEnd: number[];
  place: Map<string, { chunk: number; offset: number }>;
}

/** An arena's chunks (f32 buffers) and the views it hands out. */
export interface Arena {
  layout: ArenaLayout;
  chunks: Tensor[];
  view(spec: ParamSpec): Tensor;
}

/**
 * The arena layout of a table on this adapter: decayed tensors first, then the others, each at an offset that meets
 * the adapter's storage alignment, packed into chunks of at most the GPU's tensor limit. Undefined when a tensor
 * alone passes that limit (it is split by rows instead, and the set is not an arena).
 *
 * @example
 * ```ts
 * arenaLayout(gpu, paramTable(config)); // { chunks: [983_424], decayEnd: [982_784], place: Map { ... } }
 * ```
 */
export function arenaLayout(gpu: Gpu, specs: readonly ParamSpec[]): ArenaLayout | undefined {
  const align = Math.max(1, gpu.limits.minStorageBufferOffsetAlignment / 4);
  const limit = Math.floor(gpu.tensorLimit / 4);
  const order = [...specs.filter((s) => s.decay), ...specs.filter((s) => !s.decay)];
  const layout: ArenaLayout = { chunks: [], decayEnd: [], place: new Map() };
  let used = limit + 1;
  for (const s of order) {
    const size = sizeOf(s.shape);
    const padded = Math.ceil(Math.max(size, 1) / align) * align;
    if (padded > limit) return undefined;
    if (used + padded > limit) {
      layout.chunks.push(0);
      layout.decayEnd.push(0);
      used = 0;
    }
    const chunk = layout.chunks.length - 1;
    layout.place.set(s.name, { chunk, offset: used });
    used += padded;
    layout.chunks[chunk] = used;
    if (s.decay) layout.decayEnd[chunk] = used;
  }
  return layout.chunks.length > 0 ? layout : undefined;
}

/** Two layouts place every tensor alike (sets over the same table on the same adapter do). */
export function sameLayout(a: ArenaLayout, b: ArenaLayout): boolean {
  if (a.chunks.join() !== b.chunks.join() || a.place.size !== b.place.size) return false;
  for (const [name, p] of a.place) {
    const q = b.place.get(name);
    if (!q || q.chunk !== p.chunk || q.offset !== p.offset) return false;
  }
  return true;
}

/** Zeroed chunks for a table's arena, or undefined where the table has no arena layout. */
function newArena(gpu: Gpu, specs: readonly ParamSpec[]): Arena | undefined {
  const layout = arenaLayout(gpu, specs);
  if (!layout) return undefined;
  const chunks = layout.chunks.map((n, i) => zeros(gpu, [n], "f32", `arena chunk ${i}`));
  return {
    layout,
    chunks,
    view(spec) {
      const p = layout.place.get(spec.name)!;
      return chunks[p.chunk].view(p.offset, spec.shape);
    },
  };
}

/** Whether the kernels read a parameter in row parts: the model's matrices (embedding, projections, LM head). */
function splittable(spec: ParamSpec): boolean {
  return spec.init === "normal" && spec.shape.length === 2;
}

/** The shape of a parameter, after checking that a tensor which cannot be split fits the GPU's tensor limit. */
function checkFits(gpu: Gpu, spec: ParamSpec, dtype: DType): number[] {
  const bytes = bindingBytes(spec.shape.reduce((a, b) => a * b, 1), dtype);
  if (splittable(spec)) partRows(gpu, spec.shape, dtype, `Parameter ${spec.name} [${spec.shape}]`);
  else if (bytes > gpu.tensorLimit) {
    throw new RangeError(
      `Parameter ${spec.name} [${spec.shape}] ${dtype} takes ${bytes} bytes, more than the GPU's tensor limit of ` +
        `${gpu.tensorLimit}; only the model's matrices are split by rows, so it needs a larger limit (an adapter ` +
        `with a larger maxStorageBufferBindingSize, or a larger ${TENSOR_LIMIT_ENV} where that is set)`,
    );
  }
  return spec.shape;
}

/**
 * Uploads one parameter: split by rows when it is one of the model's matrices and passes the GPU's tensor limit,
 * else one tensor (refused, naming it, when that does not fit).
 */
export function uploadParam(gpu: Gpu, spec: ParamSpec, data: HostArray, dtype: DType = "f32"): StoredTensor {
  return storedFromHost(gpu, data, checkFits(gpu, spec, dtype), dtype, `Parameter ${spec.name}`);
}

function whole(name: string, t: StoredTensor): Tensor {
  if (t instanceof SplitTensor) {
    throw new TypeError(
      `Tensor ${name} [${t.shape}] is split into ${t.parts.length} row parts (it passes the GPU's tensor limit); ` +
        "read it with stored(), which kernels that take row parts accept",
    );
  }
  return t;
}
