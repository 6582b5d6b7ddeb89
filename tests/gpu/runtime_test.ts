import assert from "node:assert/strict";
import matmulBackward from "../../shaders/matmul_backward.wgsl" with { type: "text" };
import swigluForward from "../../shaders/swiglu_forward.wgsl" with { type: "text" };
import { Batch } from "../../src/gpu/batch.ts";
import { cachedKernel, fillTemplate, kernel } from "../../src/gpu/pipeline.ts";
import { withPieces } from "../../src/ops/wgsl.ts";
import { bucketBytes, poolOf } from "../../src/gpu/pool.ts";
import { Rng } from "../../src/util/random.ts";
import { empty, fromHost } from "../../src/gpu/tensor.ts";
import { checkParams, parseParamsStruct, uniforms } from "../../src/gpu/uniforms.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

/**
 * The shaders/ files (without `.wgsl`) that the modules under `dir` import as text. Each module must declare every
 * shader it imports as `const X: Shader = { name: "<file>", source }` (or `source: withPieces(text, {...})`) with
 * that file's text, so errors name the right file; a piece (a file with no entry point, spliced into shaders by
 * withPieces) must be passed to withPieces instead.
 */
async function importedShaders(dir: URL, found = new Set<string>()): Promise<Set<string>> {
  const shaders = new URL("../../shaders/", import.meta.url);
  for await (const e of Deno.readDir(dir)) {
    if (e.isDirectory) await importedShaders(new URL(`${e.name}/`, dir), found);
    if (!e.name.endsWith(".ts")) continue;
    const text = await Deno.readTextFile(new URL(e.name, dir));
    const imports = text.matchAll(/^import (\w+) from "(?:\.\.\/)+shaders\/(\w+)\.wgsl" with \{ type: "text" \};$/gm);
    const fileOf = new Map([...imports].map((m) => [m[1], m[2]]));
    const declared = text.matchAll(
      /^const \w+: Shader = \{\s*name: "(\w+)",\s*source(?:: (\w+)|: withPieces\((\w+), \{[^}]*\}\))?,?\s*\};$/gm,
    );
    const named = [...declared].map((m) => [fileOf.get(m[2] ?? m[3] ?? "source"), m[1]]);
    assert.deepEqual(named.map(([file]) => file), named.map(([, name]) => name), `${e.name}: shader named by its file`);
    const pieces: string[] = [];
    for (const [variable, file] of fileOf) {
      const source = await Deno.readTextFile(new URL(`${file}.wgsl`, shaders));
      if (/@compute/.test(source)) continue;
      pieces.push(file);
      assert.match(
        text,
        new RegExp(`withPieces\\(\\w+, \\{ \\w+: ${variable} \\}\\)`),
        `${e.name}: piece ${file} unused`,
      );
    }
    const shadersOf = [...fileOf.values()].filter((f) => !pieces.includes(f));
    assert.deepEqual(named.map(([file]) => file).sort(), shadersOf.sort(), `${e.name}: shader unused`);
    for (const file of fileOf.values()) found.add(file);
  }
  return found;
}

Deno.test("every shader in shaders/ is imported by some module, opens with a header, and parses its Params", async () => {
  const shaders = new URL("../../shaders/", import.meta.url);
  const files: string[] = [];
  for await (const e of Deno.readDir(shaders)) {
    if (e.name.endsWith(".wgsl")) files.push(e.name.slice(0, -5));
  }
  // The program's modules and the benchmarks' (bench/roofline.ts brings its microkernels).
  const imported = new Set([
    ...await importedShaders(new URL("../../src/", import.meta.url)),
    ...await importedShaders(new URL("../../bench/", import.meta.url)),
  ]);
  assert.deepEqual([...imported].sort(), files.sort());
  for (const name of files) {
    // `<op>_forward` only beside an `<op>_backward`; a shader with no backward is plain `<op>`.
    if (name.endsWith("_forward")) {
      assert.ok(files.includes(name.replace(/_forward$/, "_backward")), `${name}: no backward`);
    }
    const src = await Deno.readTextFile(new URL(`${name}.wgsl`, shaders));
    assert.ok(src.startsWith("//"), `${name}.wgsl must open with a header comment`);
    assert.match(src, /Bindings/, `${name}.wgsl header must describe its bindings`);
    const fields = parseParamsStruct(src);
    if (fields) { for (const [, t] of fields) assert.ok(["u32", "i32", "f32"].includes(t), `${name}: ${t}`); }
  }
});

Deno.test("withPieces fills a piece slot once, before the template values, and refuses a missing slot", () => {
  const host = "{{COMMON}}\nfn main() {}";
  const filled = withPieces(host, { COMMON: "const D = {{D}}u;" });
  assert.equal(filled, "const D = {{D}}u;\nfn main() {}");
  assert.equal(fillTemplate("demo", filled, { D: 4 }), "const D = 4u;\nfn main() {}");
  assert.throws(() => withPieces("fn main() {}", { COMMON: "x" }), /\{\{COMMON\}\}/);
  assert.throws(() => withPieces(host + host, { COMMON: "x" }), /found 2/);
});

Deno.test("uniform packing puts field i at byte 4i, pads to 16, and rejects bad values", () => {
  const layout = uniforms([["n", "u32"], ["x", "f32"], ["d", "i32"], ["e", "u32"], ["f", "f32"]] as const);
  assert.equal(layout.bytes, 32);
  const bytes = layout.pack({ n: 7, x: 1.5, d: -3, e: 0xffffffff, f: 0.25 });
  const view = new DataView(bytes.buffer);
  assert.equal(view.getUint32(0, true), 7);
  assert.equal(view.getFloat32(4, true), 1.5);
  assert.equal(view.getInt32(8, true), -3);
  assert.equal(view.getUint32(12, true), 0xffffffff);
  assert.equal(view.getFloat32(16, true), 0.25);
  assert.throws(() => layout.pack({ n: -1, x: 0, d: 0, e: 0, f: 0 }), RangeError);
  assert.throws(() => layout.pack({ n: 1.5, x: 0, d: 0, e: 0, f: 0 }), RangeError);
  assert.throws(() => layout.pack({ n: 1, x: 0, d: 0, e: 0 } as never), TypeError);
});

Deno.test("a shader whose Params differ from the host declaration is refused by name", () => {
  const src = "struct Params {\n  a: u32,\n  b: f32, // comment\n}\n";
  assert.deepEqual(parseParamsStruct(src), [["a", "u32"], ["b", "f32"]]);
  checkParams("demo", src, uniforms([["a", "u32"], ["b", "f32"]] as const));
  assert.throws(() => checkParams("demo", src, uniforms([["b", "f32"], ["a", "u32"]] as const)), /demo\.wgsl/);
  assert.throws(() => checkParams("demo", src, undefined), TypeError);
});

Deno.test("pool buckets waste at most 1/8 and never shrink a request", () => {
  for (const n of [1, 255, 256, 257, 1000, 4096, 5000, 1 << 20, (1 << 20) + 1, 123456789]) {
    const b = bucketBytes(n);
    assert.ok(b >= n, `${n} -> ${b}`);
    assert.ok(b <= Math.max(256, n * 1.125 + 256), `${n} -> ${b}`);
  }
});

Deno.test("the host generator is deterministic, restorable and uniform enough", () => {
  const a = new Rng(42);
  const b = new Rng(42);
  const xs = Array.from({ length: 5 }, () => a.u32());
  assert.deepEqual(xs, Array.from({ length: 5 }, () => b.u32()));
  assert.notDeepEqual(xs, Array.from({ length: 5 }, () => new Rng(43).u32()));
  const saved = a.state();
  const next = a.float();
  assert.equal(new Rng(saved).float(), next);
  let sum = 0;
  const n = 20000;
  for (let i = 0; i < n; i++) sum += a.float();
  assert.ok(Math.abs(sum / n - 0.5) < 0.01);
});

Deno.test({
  name: "tensors round-trip every dtype through the GPU in one readback, and released buffers are reused",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const f32 = fromHost(gpu, [1.5, -2, 3.25], [3], "f32");
    const f16 = fromHost(gpu, [0.5, 1000, -0.125], [3], "f16");
    const i32 = fromHost(gpu, [-1, 2, -3, 4, 5], [5], "i32");
    const u32 = fromHost(gpu, [0xffffffff, 0, 7], [3], "u32");
    const [a, b, c, d] = await new Batch(gpu).read([f32, f16, i32, u32]);
    assert.deepEqual([...a], [1.5, -2, 3.25]);
    assert.deepEqual([...b], [0.5, 1000, -0.125]);
    assert.deepEqual([...c], [-1, 2, -3, 4, 5]);
    assert.deepEqual([...d], [0xffffffff, 0, 7]);
    const pool = poolOf(gpu.device);
    const t = empty(gpu, [1000]);
    const buffer = t.buffer;
    t.release();
    const again = empty(gpu, [1000]);
    assert.equal(again.buffer, buffer);
    again.release();
    assert.ok(pool.stats.peak >= pool.stats.live);
  },
});

Deno.test({
  name: "a shader that fails to compile is reported with its file name when its batch is submitted",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const bad = kernel(gpu, { name: "matmul_backward", source: matmulBackward }, {
      params: uniforms([["rows", "u32"], ["N", "u32"], ["beta", "f32"]] as const),
      entryPoint: "no_such_entry",
    });
    await assert.rejects(bad.ready, /matmul_backward\.wgsl/);
  },
});

Deno.test({
  name: "one pipeline cache per device: kernel() finds a kernel by its template, cachedKernel() by a short key",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const shader = { name: "swiglu_forward", source: swigluForward };
    const params = uniforms([["n", "u32"]] as const);
    const k = kernel(gpu, shader, { params });
    assert.equal(kernel(gpu, shader, { params }), k);
    let builds = 0;
    const build = () => {
      builds++;
      return kernel(gpu, shader, { params });
    };
    assert.equal(cachedKernel(gpu, "swiglu_forward test", build), k);
    assert.equal(cachedKernel(gpu, "swiglu_forward test", build), k);
    assert.equal(builds, 1);
    await k.ready;
  },
});

Deno.test({
  name: "a validation error while recording (one buffer bound read-only and writable) fails the submit by name",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const t = fromHost(gpu, [1, 2, 3, 4], [2, 2]);
    const batch = new Batch(gpu);
    batch.dispatch({
      kernel: kernel(gpu, { name: "swiglu_forward", source: swigluForward }, {
        params: uniforms([["n", "u32"]] as const),
      }),
      buffers: [t, t, t],
      params: { n: 4 },
      grid: [1],
    });
    await assert.rejects(batch.submit(), /swiglu_forward/);
    t.release();
  },
});
