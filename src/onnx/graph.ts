/**
 * A small ONNX graph builder: nodes, initialisers and typed inputs and outputs as plain data, which `proto.ts`
 * encodes. Node outputs get fresh names; constants of the same value are shared. Only the attribute kinds the
 * decoder needs are supported: a number is an INT attribute, a number array an INTS one.
 */

/** Element types the decoder uses, with their ONNX `TensorProto.DataType` codes. */
export const DTYPES = { float32: 1, int64: 7, bool: 9, float16: 10 } as const;

/** An element type of a graph value. */
export type DType = keyof typeof DTYPES;

/** A dimension: a size, or a symbolic name (`batch_size`, `past_sequence_length`). */
export type Dim = number | string;

/** A typed graph input or output. */
export interface ValueInfo {
  name: string;
  type: DType;
  dims: Dim[];
}

/** A constant tensor stored in the model. */
export interface Initializer {
  name: string;
  type: DType;
  dims: number[];
  /** Little-endian element bytes. */
  bytes: Uint8Array;
}

/** One operator application. */
export interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  attrs: Record<string, number | number[]>;
}

/** The graph of one model. */
export class Graph {
  readonly nodes: NodeSpec[] = [];
  readonly initializers: Initializer[] = [];
  readonly inputs: ValueInfo[] = [];
  readonly outputs: ValueInfo[] = [];
  readonly #shared = new Map<string, string>();
  #count = 0;

  /** Declares a graph input; returns its name. */
  input(name: string, type: DType, dims: Dim[]): string {
    this.inputs.push({ name, type, dims });
    return name;
  }

  /** Declares `value` (a node output) as a graph output under `name`. */
  output(name: string, value: string, type: DType, dims: Dim[]): void {
    this.op("Identity", [value], {}, name);
    this.outputs.push({ name, type, dims });
  }

  /** Appends a node; returns its output's name (`name`, or a fresh one). */
  op(op: string, inputs: string[], attrs: Record<string, number | number[]> = {}, name?: string): string {
    const out = name ?? `${op.toLowerCase()}_${this.#count++}`;
    this.nodes.push({ op, inputs, outputs: [out], attrs });
    return out;
  }

  /** Stores a named tensor: f32 data as float32 or, with `f16`, as float16 (cast back to float32 by the caller). */
  weight(name: string, dims: number[], data: Float32Array, f16 = false): string {
    const bytes = f16 ? Float16Array.from(data) : data;
    this.initializers.push({
      name,
      type: f16 ? "float16" : "float32",
      dims,
      bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    });
    return name;
  }

  /** A shared int64 constant: a 1-D tensor of `values`, or a scalar with `scalar`. */
  ints(values: number[], scalar = false): string {
    const key = `i64 ${scalar} ${values}`;
    return this.#constant(key, () => {
      const data = BigInt64Array.from(values, (v) => BigInt(v));
      return { type: "int64", dims: scalar ? [] : [values.length], bytes: new Uint8Array(data.buffer) };
    });
  }

  /** A shared float32 constant: a 1-D tensor of `values` (broadcast like a scalar when it has one). */
  floats(values: number[]): string {
    return this.#constant(`f32 ${values}`, () => {
      const data = Float32Array.from(values);
      return { type: "float32", dims: [values.length], bytes: new Uint8Array(data.buffer) };
    });
  }

  #constant(key: string, make: () => Omit<Initializer, "name">): string {
    let name = this.#shared.get(key);
    if (!name) {
      name = `const_${this.#shared.size}`;
      this.initializers.push({ name, ...make() });
      this.#shared.set(key, name);
    }
    return name;
  }
}
