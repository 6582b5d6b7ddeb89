// A reader of stored ZIP archives for the tests, written from the format's layout (the end record, the central
// directory, each local header) and independent of src/studio/zip.ts, which writes them.
import assert from "node:assert/strict";

/** The entries of a stored ZIP by name: their bytes and the CRC-32 the central directory records. */
export function readZip(bytes: Uint8Array): Map<string, { data: Uint8Array; crc: number }> {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length - 22;
  assert.equal(v.getUint32(end, true), 0x06054b50, "end of central directory");
  const count = v.getUint16(end + 10, true);
  let at = v.getUint32(end + 16, true);
  const out = new Map<string, { data: Uint8Array; crc: number }>();
  for (let i = 0; i < count; i++) {
    assert.equal(v.getUint32(at, true), 0x02014b50, `central header ${i}`);
    const crc = v.getUint32(at + 16, true), size = v.getUint32(at + 20, true);
    const nameLength = v.getUint16(at + 28, true), offset = v.getUint32(at + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
    assert.equal(v.getUint32(offset, true), 0x04034b50, `local header of ${name}`);
    assert.equal(v.getUint16(offset + 8, true), 0, "stored");
    const start = offset + 30 + v.getUint16(offset + 26, true) + v.getUint16(offset + 28, true);
    out.set(name, { data: bytes.subarray(start, start + size), crc });
    at += 46 + nameLength;
  }
  return out;
}

/** Unpacks a stored ZIP into `dir`; returns the folder names at its top. */
export async function unzipTo(bytes: Uint8Array, dir: string): Promise<string[]> {
  const tops = new Set<string>();
  for (const [name, { data }] of readZip(bytes)) {
    assert.ok(!name.startsWith("/") && !name.split("/").includes(".."), `entry ${name} stays inside`);
    tops.add(name.split("/")[0]);
    if (name.endsWith("/")) await Deno.mkdir(`${dir}/${name}`, { recursive: true });
    else {
      await Deno.mkdir(`${dir}/${name.slice(0, name.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeFile(`${dir}/${name}`, data);
    }
  }
  return [...tops];
}
