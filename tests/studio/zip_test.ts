// The studio's download: a stored ZIP read back by the tests' own reader (unzip.ts, from the format's layout), and by
// Info-ZIP's unzip where the machine has it; CRC-32 against its published check value.
import assert from "node:assert/strict";
import { crc32, zipFolder } from "../../src/studio/zip.ts";
import { readZip } from "./unzip.ts";

Deno.test("crc32 gives the check value of CRC-32/ISO-HDLC", () => {
  assert.equal(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
  assert.equal(crc32(new Uint8Array(0)), 0);
});

Deno.test("zipFolder stores each file under the folder, with its CRC, and unzip agrees", async () => {
  const big = new Uint8Array(70_000).map((_, i) => (i * 7919) % 251);
  const files = new Map([["config.json", new TextEncoder().encode('{"a": 1}')], ["model.safetensors", big]]);
  const zip = zipFolder("run-final", files, new Date(2026, 11, 2, 3, 4, 6));
  const read = readZip(zip);
  assert.deepEqual([...read.keys()], ["run-final/", "run-final/config.json", "run-final/model.safetensors"]);
  for (const [name, data] of files) {
    const entry = read.get(`run-final/${name}`)!;
    assert.deepEqual(entry.data, data);
    assert.equal(entry.crc, crc32(data));
  }
  const unzip = await new Deno.Command("unzip", { args: ["-v"], stdout: "null", stderr: "null" }).output().catch(() =>
    undefined
  );
  if (!unzip?.success) return; // the reader above checked it; unzip is an extra witness where installed
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/x.zip`, zip);
    const r = await new Deno.Command("unzip", { args: ["-q", "x.zip"], cwd: dir }).output();
    assert.ok(r.success, new TextDecoder().decode(r.stderr));
    assert.deepEqual(await Deno.readFile(`${dir}/run-final/model.safetensors`), big);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
