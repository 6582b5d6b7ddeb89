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
import { bindingBytes, type DType, type HostArray, type Tensor } from "../gpu/tensor.ts";
import type { ModelConfig } from "./config.ts";
import { EMBED, LM_HEAD, type ParamSpec, paramTable } from "./params.ts";

/**
 * GPU tensors by Hugging Face name, in table order. The table is the model's (paramTable) unless another is given:
 * a LoRA adapter's (loraTable), whose gradients and moments are then sets over the same table.
 */
export class TensorSet {
  readonly tensors = new Map<string, StoredTensor>();

  constructor(
    readonly gpu: Gpu,
    readonly config: ModelConfig,
    fill: (spec: ParamSpec) => StoredTensor,
    readonly specs: ParamSpec[] = paramTable(config),
  ) {
    for (const spec of this.specs) this.tensors.set(spec.name, fill(spec));
  }

  /** A set of zero f32 tensors with the table's shapes (gradients, moments). */
  static zeros(gpu: Gpu, config: ModelConfig, specs?: ParamSpec[]): TensorSet {
    return new TensorSet(gpu, config, (s) => zerosStored(gpu, checkFits(gpu, s, "f32"), "f32", s.name), specs);
  }

  /**
   * Uploads host tensors; every table entry must be present with its exact element count. `dtype` picks each
   * tensor's storage (default f32; f16 is rounded to nearest on upload).
   */
  static fromHost(
    gpu: Gpu,
    config: ModelConfig,
    host: ReadonlyMap<string, Float32Array>,
    o: { specs?: ParamSpec[]; dtype?: (spec: ParamSpec, data: Float32Array) => DType } = {},
  ): TensorSet {
    return new TensorSet(gpu, config, (s) => {
      const data = host.get(s.name);
      const size = s.shape.reduce((a, b) => a * b, 1);
      if (!data) throw new TypeError(`Parameter ${s.name} [${s.shape}] is missing`);
      if (data.length !== size) {
        throw new TypeError(`Parameter ${s.name} has ${data.length} values but its shape [${s.shape}] needs ${size}`);
      }
      return uploadParam(gpu, s, data, o.dtype?.(s, data));
    }, o.specs);
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
    return this.stored(this.config.tieWordEmbeddings ? EMBED : LM_HEAD);
  }

  /** Records zero fills of every tensor. */
  clear(batch: Batch): void {
    for (const t of this.tensors.values()) for (const p of rowParts(t)) batch.clear(p.tensor);
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
    this.tensors.clear();
  }
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
