// The page's Deno (src/studio/memory_deno.ts): a folder tree in memory with Deno's semantics where the training path
// relies on them (NotFound and AlreadyExists by class, append, truncate, rename of a folder over an empty one or
// none, recursive remove, an open file written in pieces), and, on the studio page's actual bundle, every member of
// Deno's namespace the bundled code names is one the page's Deno has.
import assert from "node:assert/strict";
import { memoryDeno, MemoryFiles, normalPath } from "../../src/studio/memory_deno.ts";
import { bundleStudio } from "../../src/studio/server.ts";

const dec = new TextDecoder(), enc = new TextEncoder();

Deno.test("paths fold to absolute ones", () => {
  assert.equal(normalPath("runs/a/../b/./c"), "/runs/b/c");
  assert.equal(normalPath("/x//y/"), "/x/y");
  assert.equal(normalPath(new URL("file:///m/a%20b")), "/m/a b");
});

Deno.test("the page's Deno reads, writes, appends, renames and removes as Deno does", async () => {
  const fs = new MemoryFiles();
  const D = memoryDeno(fs, { CRUCIBLE_TUNE: "off" });
  assert.equal(D.env.get("CRUCIBLE_TUNE"), "off");
  assert.equal(D.env.get("HOME"), undefined);
  await assert.rejects(D.readTextFile("runs/r/metrics.jsonl"), D.errors.NotFound);
  await assert.rejects(D.writeTextFile("runs/r/metrics.jsonl", "x"), D.errors.NotFound); // no folder yet
  await D.mkdir("runs/r/checkpoints", { recursive: true });
  await D.mkdir("runs/r/checkpoints", { recursive: true });
  await assert.rejects(D.mkdir("runs/r/checkpoints"), D.errors.AlreadyExists);
  await D.writeTextFile("runs/r/metrics.jsonl", "a\n", { append: true, create: true });
  await D.writeTextFile("runs/r/metrics.jsonl", "b\n", { append: true, create: true });
  assert.equal(await D.readTextFile("/runs/r/metrics.jsonl"), "a\nb\n");
  assert.equal((await D.stat("runs/r/metrics.jsonl")).size, 4);
  await D.truncate("runs/r/metrics.jsonl", 2);
  assert.equal(await D.readTextFile("runs/r/metrics.jsonl"), "a\n");

  // writeDirAtomic's moves: files written through open(createNew) in pieces, the folder renamed into place, the old
  // one moved aside first and removed.
  for (const dir of ["runs/r/checkpoints/final.tmp-1", "runs/r/checkpoints/final.tmp-2"]) {
    await D.mkdir(dir, { recursive: true });
    const f = await D.open(`${dir}/model.safetensors`, { write: true, createNew: true });
    for (const piece of ["ab", "cde", dir.slice(-1)]) await f.write!(enc.encode(piece));
    await f.sync();
    f.close();
    await assert.rejects(D.open(`${dir}/model.safetensors`, { write: true, createNew: true }), D.errors.AlreadyExists);
    const target = "runs/r/checkpoints/final";
    if (fs.entry(target)) {
      await assert.rejects(D.rename(dir, "runs/r"), /Directory not empty/);
      await D.rename(target, `${target}.old-1`);
    }
    await D.rename(dir, target);
    await D.remove(`${target}.old-1`, { recursive: true }).catch(() => {});
  }
  assert.equal(await D.readTextFile("runs/r/checkpoints/final/model.safetensors"), "abcde2");
  const names = [];
  for await (const e of D.readDir("runs/r/checkpoints")) names.push(`${e.name}${e.isDirectory ? "/" : ""}`);
  assert.deepEqual(names, ["final/"]);
  assert.deepEqual([...fs.files("runs/r").keys()].sort(), ["checkpoints/final/model.safetensors", "metrics.jsonl"]);
  await assert.rejects(D.remove("runs/r"), D.errors.DirectoryNotEmpty);
  await D.remove("runs/r", { recursive: true });
  assert.equal(fs.entry("runs/r/metrics.jsonl"), undefined);
  assert.throws(() => D.symlink(), /Deno\.symlink is not available in the studio page/);
  assert.equal(dec.decode(await D.readFile("/nothing").catch(() => enc.encode("missing"))), "missing");
});

Deno.test("every member of Deno the studio page's bundle names is one the page's Deno has", async () => {
  const bundle = await bundleStudio();
  const D = memoryDeno(new MemoryFiles()) as unknown as Record<string, Record<string, unknown>>;
  const used = new Set([...bundle.matchAll(/\bDeno\.([A-Za-z]+)(?:\.([A-Za-z]+))?/g)].map((m) => m.slice(1, 3)));
  const missing = [...used].filter(([a, b]) => {
    if (!(a in D)) return true;
    const inner = D[a];
    return b !== undefined && typeof inner === "object" && inner !== null && !(b in inner) &&
      ["errors", "env", "build", "version"].includes(a);
  }).map(([a, b]) => (b ? `${a}.${b}` : a));
  assert.ok(used.size > 10, `the bundle names ${used.size} members`);
  assert.deepEqual([...new Set(missing)], [], "members the page's Deno lacks");
});
