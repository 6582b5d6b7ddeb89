/**
 * Uniform parameter blocks, declared once. A kernel's `Params` struct holds only 4-byte scalars, so field i sits at
 * byte 4·i and the struct is padded to 16 bytes; the declaration packs the bytes and checks the shader's struct.
 */

/** Scalar types allowed in a `Params` struct. */
export type ScalarType = "u32" | "i32" | "f32";

/** An ordered list of scalar fields, shared by the host packer and the shader's `struct Params`. */
export class UniformLayout<K extends string = string> {
  /** The fields in the order the shader's `struct Params` declares them. */
  readonly fields: readonly (readonly [K, ScalarType])[];

  /** A layout of `fields`, each 4 bytes; a name given twice is refused. */
  constructor(fields: readonly (readonly [K, ScalarType])[]) {
    const seen = new Set<string>();
    for (const [name] of fields) {
      if (seen.has(name)) throw new TypeError(`Uniform field "${name}" is declared twice`);
      seen.add(name);
    }
    this.fields = fields;
  }

  /** Size of the block in bytes (a multiple of 16, as uniform buffers require). */
  get bytes(): number {
    return Math.max(16, Math.ceil((this.fields.length * 4) / 16) * 16);
  }

  /** Writes `values` into `view` at byte `offset`; every field must be given and integers must be in range. */
  packInto(view: DataView, offset: number, values: Record<K, number>): void {
    this.fields.forEach(([name, type], i) => {
      const v = values[name];
      if (typeof v !== "number" || Number.isNaN(v)) {
        throw new TypeError(`Uniform field "${name}" needs a number, got ${v}`);
      }
      const at = offset + 4 * i;
      if (type === "f32") view.setFloat32(at, v, true);
      else {
        const ok = Number.isInteger(v) &&
          (type === "u32" ? v >= 0 && v <= 0xffffffff : v >= -0x80000000 && v <= 0x7fffffff);
        if (!ok) throw new RangeError(`Uniform field "${name}" (${type}) cannot hold ${v}`);
        if (type === "u32") view.setUint32(at, v, true);
        else view.setInt32(at, v, true);
      }
    });
  }

  /** The packed bytes of one block. */
  pack(values: Record<K, number>): Uint8Array {
    const bytes = new Uint8Array(this.bytes);
    this.packInto(new DataView(bytes.buffer), 0, values);
    return bytes;
  }
}

/** Declares a uniform block. */
export function uniforms<K extends string>(fields: readonly (readonly [K, ScalarType])[]): UniformLayout<K> {
  return new UniformLayout(fields);
}

/** The fields of `struct Params { ... }` in WGSL source, in order, or undefined when there is none. */
export function parseParamsStruct(source: string): [string, string][] | undefined {
  const match = /struct\s+Params\s*\{([^}]*)\}/.exec(source);
  if (!match) return undefined;
  const body = match[1].replace(/\/\/[^\n]*/g, "");
  return body.split(",").map((s) => s.trim()).filter((s) => s.length > 0).map((s) => {
    const [name, type] = s.split(":").map((x) => x.trim());
    return [name, type];
  });
}

/** Throws a TypeError naming the shader when its `Params` struct differs from the layout. */
export function checkParams(shader: string, source: string, layout: UniformLayout | undefined): void {
  const parsed = parseParamsStruct(source);
  const declared = layout?.fields.map(([n, t]) => `${n}: ${t}`) ?? [];
  const found = parsed?.map(([n, t]) => `${n}: ${t}`) ?? [];
  if (declared.join(", ") !== found.join(", ")) {
    throw new TypeError(
      `Shader ${shader}.wgsl declares Params {${found.join(", ")}} but its host module packs {${declared.join(", ")}}`,
    );
  }
}
