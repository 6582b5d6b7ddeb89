/**
 * Encodes a {@linkcode Graph} as an ONNX `ModelProto` with `onnx-proto` (npm, MIT): ONNX's own `onnx.proto`
 * compiled ahead of time into protobufjs encoders. Chosen over the alternatives because it carries the schema:
 * plain `protobufjs` would need a copy of onnx.proto kept here and parsed at run time, and `@bufbuild/protobuf`
 * a code-generation step (protoc-gen-es) and generated files to keep in step with ONNX; onnx-proto is one import
 * whose only dependency is protobufjs, and it is what ONNX's JavaScript tools (onnxjs, Netron's forks) use.
 * Its schema is IR version 8, which admits opsets up to 17, the opset the decoder is written for.
 *
 * The package is imported on first use only, by a specifier held in a variable, so neither `deno cache` of the
 * program nor `deno task train` installs it; the commands that use it run under src/onnx/deno.lock, which pins it.
 */
import { DTYPES, type Graph, type ValueInfo } from "./graph.ts";

/** The pinned package (src/onnx/deno.lock's and tests/deno.lock's entry for it). */
export const ONNX_PROTO = "npm:onnx-proto@8.0.1";

/** The ONNX operator set the decoder is written for. */
export const OPSET = 17;
const IR_VERSION = 8;

/** The largest model one protobuf message can hold; beyond it ONNX needs external data files. */
const PROTOBUF_LIMIT = 2 ** 31 - 1;

interface Encoder {
  encode(message: unknown): { finish(): Uint8Array };
}

let loaded: Promise<Encoder> | undefined;

async function modelProto(): Promise<Encoder> {
  const spec = ONNX_PROTO;
  const mod = await import(spec);
  const onnx = (mod.default ?? mod).onnx;
  return onnx.ModelProto as Encoder;
}

function valueInfo(v: ValueInfo) {
  const dim = v.dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d }));
  return { name: v.name, type: { tensorType: { elemType: DTYPES[v.type], shape: { dim } } } };
}

/**
 * The ONNX file of a graph.
 *
 * @example
 * ```ts
 * const bytes = await encodeModel(graph, { producer: "crucible" });
 * await Deno.writeFile("onnx/model.onnx", bytes);
 * ```
 */
export async function encodeModel(graph: Graph, o: { producer: string; docString?: string }): Promise<Uint8Array> {
  const size = graph.initializers.reduce((n, t) => n + t.bytes.length, 0);
  if (size >= PROTOBUF_LIMIT) {
    throw new RangeError(
      `Exporting: the weights take ${(size / 2 ** 30).toFixed(2)} GiB, past the 2 GiB one ONNX file can hold; ` +
        "export with --dtype f16 (half the size) or a smaller model (external data files are not written)",
    );
  }
  loaded ??= modelProto();
  const ModelProto = await loaded;
  const message = {
    irVersion: IR_VERSION,
    producerName: o.producer,
    docString: o.docString ?? "",
    opsetImport: [{ domain: "", version: OPSET }],
    graph: {
      name: "main_graph",
      node: graph.nodes.map((n, i) => ({
        name: `${n.op}_${i}`,
        opType: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attrs).map(([name, v]) =>
          Array.isArray(v) ? { name, type: 7, ints: v } : { name, type: 2, i: v }
        ),
      })),
      initializer: graph.initializers.map((t) => ({
        name: t.name,
        dims: t.dims,
        dataType: DTYPES[t.type],
        rawData: t.bytes,
      })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  };
  return ModelProto.encode(message).finish();
}
