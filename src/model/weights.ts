/**
 * A set of GPU tensors shaped by the parameter table: the parameters themselves, and likewise their gradients
 * and the optimizer's moments. One tensor per Hugging Face name.
 */
import { Batch } from "../gpu/batch.ts";
import type { Gpu } from "../gpu/device.ts";
import { type DType, fromHost, type Tensor, zeros } from "../gpu/tensor.ts";
import type { ModelConfig } from "./config.ts";
import { EMBED, LM_HEAD, type ParamSpec, paramTable } from "./params.ts";

/**
 * GPU tensors by Hugging Face name, in table order. The table is the model's (paramTable) unless another is given:
 * a LoRA adapter's (loraTable), whose gradients and moments are then sets over the same table.
 */
export class TensorSet {
  readonly tensors = new Map<string, Tensor>();

  constructor(
    readonly gpu: Gpu,
    readonly config: ModelConfig,
    fill: (spec: ParamSpec) => Tensor,
    readonly specs: ParamSpec[] = paramTable(config),
  ) {
    for (const spec of this.specs) this.tensors.set(spec.name, fill(spec));
  }

  /** A set of zero f32 tensors with the table's shapes (gradients, moments). */
  static zeros(gpu: Gpu, config: ModelConfig, specs?: ParamSpec[]): TensorSet {
    return new TensorSet(gpu, config, (s) => zeros(gpu, s.shape, "f32", s.name), specs);
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
      return fromHost(gpu, data, s.shape, o.dtype?.(s, data));
    }, o.specs);
  }

  /** The tensor of a name; throws a RangeError naming it when absent. */
  get(name: string): Tensor {
    const t = this.tensors.get(name);
    if (!t) throw new RangeError(`No tensor named ${name} in this model`);
    return t;
  }

  /** The tensor of a name, or undefined: a gradient set holds only what trains (a LoRA run: the adapters). */
  find(name: string): Tensor | undefined {
    return this.tensors.get(name);
  }

  /** The output projection: lm_head, or the embedding when tied. */
  get head(): Tensor {
    return this.get(this.config.tieWordEmbeddings ? EMBED : LM_HEAD);
  }

  /** Records zero fills of every tensor. */
  clear(batch: Batch): void {
    for (const t of this.tensors.values()) batch.clear(t);
  }

  /** SYNC POINT: reads every tensor back in one readback. */
  async toHost(): Promise<Map<string, Float32Array>> {
    const names = [...this.tensors.keys()];
    const data = await new Batch(this.gpu).read(names.map((n) => this.get(n)));
    return new Map(names.map((n, i) => [n, data[i] as Float32Array]));
  }

  /** Returns every buffer to the pool. */
  release(): void {
    for (const t of this.tensors.values()) t.release();
    this.tensors.clear();
  }
}
