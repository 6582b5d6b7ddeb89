/** safetensors: round trips, bf16/f16 by hand, shards, and every corruption refused with file and tensor named. */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import {
  type HostTensor,
  loadSafetensors,
  parseSafetensors,
  saveSafetensors,
  serializeSafetensors,
} from "../../src/model/safetensors.ts";

const tensors = (): Map<string, HostTensor> =>
  new Map([
    ["a.weight", { shape: [2, 3], data: new Float32Array([1, -2, 3.5, 1e-8, 65504, -0.1]) }],
    ["b.bias", { shape: [3], data: new Float32Array([0.1, 0.2, 0.3]) }], // odd f16 count: misaligns what follows
    ["scalar", { shape: [], data: new Float32Array([42]) }],
    ["empty", { shape: [0, 4], data: new Float32Array(0) }],
    ["c", { shape: [1, 2, 2], data: new Float32Array([Math.PI, -Math.E, 1 / 3, 7]) }],
  ]);

/** A file from a header object and data bytes, header padded with spaces as Hugging Face does. */
function rawFile(header: Record<string, unknown>, data: Uint8Array, headerLength?: number): Uint8Array {
  const json = JSON.stringify(header);
  return fromHeaderText(json.padEnd(Math.ceil(json.length / 8) * 8, " "), data, headerLength);
}

function fromHeaderText(text: string, data: Uint8Array = new Uint8Array(0), headerLength?: number): Uint8Array {
  const json = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

Deno.test("safetensors: f32 round trip keeps names, order, shapes and bits; header is HF-shaped", () => {
  const bytes = serializeSafetensors(tensors());
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal(n % 8, 0, "data starts 8-byte aligned");
  const header = new TextDecoder().decode(bytes.subarray(8, 8 + n));
  assert.ok(header.startsWith('{"__metadata__":{"format":"pt"},"a.weight":{"dtype":"F32","shape":[2,3],'), header);
  assert.match(header, /^[^ ]* *$/, "padding is trailing spaces");
  const { tensors: back, metadata } = parseSafetensors(bytes, "x.safetensors");
  assert.deepEqual(metadata, { format: "pt" });
  assert.deepEqual([...back.keys()], [...tensors().keys()]);
  for (const [name, t] of tensors()) {
    assert.deepEqual(back.get(name)!.shape, t.shape, name);
    assert.deepEqual(back.get(name)!.data, t.data, name);
  }
});

Deno.test("safetensors: f16 round trip rounds to f16 and reads back the same values", () => {
  const bytes = serializeSafetensors(tensors(), { dtype: "f16" });
  const back = parseSafetensors(bytes).tensors;
  for (const [name, t] of tensors()) {
    assert.deepEqual(back.get(name)!.data, Float32Array.from(Float16Array.from(t.data)), name);
  }
  assert.equal(back.get("a.weight")!.data[3], 0, "1e-8 underflows f16");
  assert.ok(serializeSafetensors(tensors(), { dtype: "f16" }).length < serializeSafetensors(tensors()).length);
});

Deno.test("safetensors: bf16, f16 and unaligned f32 written by hand convert exactly", () => {
  // bf16 [1, -2, 3.140625, 0.15625, -inf] then f16 [1, -0.5, 65504], then f32 at an odd 16-bit offset.
  const bf16 = [0x3f80, 0xc000, 0x4049, 0x3e20, 0xff80];
  const f16 = [0x3c00, 0xb800, 0x7bff];
  const data = new Uint8Array(bf16.length * 2 + f16.length * 2 + 8);
  const view = new DataView(data.buffer);
  [...bf16, ...f16].forEach((v, i) => view.setUint16(2 * i, v, true));
  view.setFloat32(16, 0.75, true);
  view.setFloat32(20, -1e30, true);
  const file = rawFile({
    x: { dtype: "BF16", shape: [5], data_offsets: [0, 10] },
    y: { dtype: "F16", shape: [3], data_offsets: [10, 16] },
    z: { dtype: "F32", shape: [2], data_offsets: [16, 24] },
  }, data);
  // Shift the whole file by 2 bytes inside a larger buffer: z's data is then not 4-byte aligned in memory.
  const shifted = new Uint8Array(file.length + 2).subarray(2);
  shifted.set(file);
  for (const bytes of [file, shifted]) {
    const t = parseSafetensors(bytes).tensors;
    assert.deepEqual([...t.get("x")!.data], [1, -2, 3.140625, 0.15625, -Infinity]);
    assert.deepEqual([...t.get("y")!.data], [1, -0.5, 65504]);
    assert.deepEqual([...t.get("z")!.data], [0.75, Math.fround(-1e30)]);
  }
});

Deno.test("safetensors: a sharded checkpoint loads through its index", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const all = [...tensors()];
    await saveSafetensors(`${dir}/model-00001-of-00002.safetensors`, all.slice(0, 2));
    await saveSafetensors(`${dir}/model-00002-of-00002.safetensors`, all.slice(2), { dtype: "f16" });
    const weightMap = Object.fromEntries(all.map(([n], i) => [n, `model-0000${i < 2 ? 1 : 2}-of-00002.safetensors`]));
    const index = `${dir}/model.safetensors.index.json`;
    await Deno.writeTextFile(index, JSON.stringify({ metadata: { total_size: 0 }, weight_map: weightMap }));
    const back = await loadSafetensors(index);
    assert.deepEqual([...back.keys()].sort(), all.map(([n]) => n).sort());
    assert.deepEqual(back.get("a.weight")!.data, tensors().get("a.weight")!.data);
    assert.deepEqual(back.get("c")!.shape, [1, 2, 2]);

    weightMap["lost.weight"] = "model-00002-of-00002.safetensors";
    await Deno.writeTextFile(index, JSON.stringify({ weight_map: weightMap }));
    await assert.rejects(() => loadSafetensors(index), (e: Error) => {
      assert.ok(e instanceof SyntaxError);
      assert.match(e.message, /model-00002-of-00002\.safetensors: tensor "lost\.weight" named in .*index\.json/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("safetensors: corrupt and truncated files throw a SyntaxError naming the file and the tensor", async () => {
  const good = serializeSafetensors(tensors());
  const f32 = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
  const cases: [string, Uint8Array, RegExp][] = [
    ["short", good.subarray(0, 5), /shorter than the 8-byte header length/],
    ["header length", rawFile({}, f32, 1 << 20), /header length 1048576 does not fit/],
    ["json", fromHeaderText('{"w": {"dtype": "F3'), /header is not valid JSON/],
    ["truncated", good.subarray(0, good.length - 3), /tensor "c" data_offsets \[\d+, \d+\] run past/],
    [
      "overlap",
      rawFile({
        p: { dtype: "F32", shape: [2], data_offsets: [0, 8] },
        q: { dtype: "F32", shape: [2], data_offsets: [4, 12] },
      }, f32),
      /tensor "q" overlaps tensor "p"/,
    ],
    [
      "dtype size",
      rawFile({ w: { dtype: "F16", shape: [4], data_offsets: [0, 16] } }, f32),
      /tensor "w" holds 16 bytes but F16 \[4\] needs 8/,
    ],
    ["shape", rawFile({ w: { dtype: "F32", shape: [3, 2], data_offsets: [0, 16] } }, f32), /tensor "w" holds 16 bytes/],
    [
      "bad shape",
      rawFile({ w: { dtype: "F32", shape: [-4], data_offsets: [0, 16] } }, f32),
      /tensor "w" has invalid shape/,
    ],
    [
      "unknown dtype",
      rawFile({ w: { dtype: "F33", shape: [4], data_offsets: [0, 16] } }, f32),
      /tensor "w" has unknown dtype F33/,
    ],
    [
      "offsets",
      rawFile({ w: { dtype: "F32", shape: [4], data_offsets: [16, 0] } }, f32),
      /tensor "w" has invalid data_offsets/,
    ],
  ];

  const dir = await Deno.makeTempDir();
  try {
    for (const [what, bytes, message] of cases) {
      const path = `${dir}/${what.replace(" ", "_")}.safetensors`;
      await Deno.writeFile(path, bytes);
      await assert.rejects(() => loadSafetensors(path), (e: Error) => {
        assert.ok(e instanceof SyntaxError, `${what}: ${e}`);
        assert.ok(e.message.includes(path), `${what}: ${e.message}`);
        assert.match(e.message, message, what);
        return true;
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  // A dtype the format knows but Crucible does not compute with is a TypeError, not corruption.
  assert.throws(
    () => parseSafetensors(rawFile({ i: { dtype: "I64", shape: [2], data_offsets: [0, 16] } }, f32)),
    TypeError,
  );
  // Writing refuses data that does not match its shape.
  assert.throws(() => serializeSafetensors([["w", { shape: [3], data: new Float32Array(2) }]]), /"w" has 2 values/);
});

Deno.test("a Node Buffer at an unaligned offset parses to the same values (Buffer's slice is a view, not a copy)", () => {
  const bytes = serializeSafetensors(new Map([["w", { shape: [3], data: new Float32Array([1, 2, 3]) }]]));
  const pool = Buffer.alloc(bytes.byteLength + 1);
  pool.set(bytes, 1);
  const { tensors } = parseSafetensors(pool.subarray(1));
  assert.deepEqual([...tensors.get("w")!.data], [1, 2, 3]);
});
