// Tensors split by rows past the device's tensor limit: the part sizes, the limit's checks, and a round trip of
// split tensors through upload, overwrite and readback (one readback or several), f32 and f16.
import assert from "node:assert/strict";
import { type Gpu, requestGpu, TENSOR_LIMIT_ENV, withTensorLimit } from "../../src/gpu/device.ts";
import { bucketBytes, bucketFloor } from "../../src/gpu/pool.ts";
import {
  partRows,
  readStored,
  rowParts,
  splitRows,
  SplitTensor,
  storedFromHost,
  writeStored,
  zerosStored,
} from "../../src/gpu/split.ts";
import { Tensor } from "../../src/gpu/tensor.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

Deno.test("split rows: whole when it fits, multiples of 64 rows where a part holds 64, a row past the limit refused", () => {
  assert.deepEqual(splitRows(100, 16, 1600), [100]);
  assert.deepEqual(splitRows(100, 16, 1596), [64, 36]);
  assert.deepEqual(splitRows(40, 16, 630), [39, 1]);
  assert.deepEqual(splitRows(29, 64, 448), [7, 7, 7, 7, 1]);
  // Qwen2.5-0.5B's f32 embedding under lavapipe's 128 MiB: 37449 rows fit, parts of 37440.
  const parts = splitRows(151936, 896 * 4, 128 * 2 ** 20);
  assert.deepEqual(parts, [37440, 37440, 37440, 37440, 2176]);
  assert.equal(parts.reduce((a, b) => a + b, 0), 151936);
  assert.throws(() => splitRows(4, 4096, 1024, "Parameter x"), /Parameter x has rows of 4096 bytes, more than .* 1024/);
});

Deno.test("bucketFloor is the largest pool bucket within a byte count", () => {
  for (const n of [256, 300, 1000, 4096, 5000, 123457, 2 ** 27 + 5, 2 ** 31 - 1]) {
    const f = bucketFloor(n);
    assert.ok(f <= n && bucketBytes(f) === f, `${n}: ${f}`);
    assert.ok(bucketBytes(f + 1) > n, `${n}: the next byte count rounds past it`);
  }
  assert.equal(bucketFloor(2 ** 31 - 1), 15 * 2 ** 27);
});

Deno.test({
  name: "a lowered tensor limit is checked; split tensors upload, overwrite and read back exactly, f32 and f16",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    assert.ok(gpu.tensorLimit <= gpu.limits.maxStorageBufferBindingSize);
    assert.throws(() => withTensorLimit(gpu, gpu.tensorLimit + 4), /exceeds the adapter's own limit/);
    assert.throws(() => withTensorLimit(gpu, 10), /positive multiple of 4/);
    const small = withTensorLimit(gpu, 448);
    assert.equal(small.device, gpu.device);
    const shape = [29, 16];
    const data = Float32Array.from({ length: 29 * 16 }, (_, i) => (i % 97) * 0.25 - 7);
    const f32 = storedFromHost(small, data, shape);
    assert.ok(f32 instanceof SplitTensor);
    assert.deepEqual(f32.parts.map((p) => [p.start, p.rows]), [[0, 7], [7, 7], [14, 7], [21, 7], [28, 1]]);
    assert.deepEqual(f32.parts.map((p) => p.tensor.shape), [[7, 16], [7, 16], [7, 16], [7, 16], [1, 16]]);
    const f16 = storedFromHost(small, data, shape, "f16");
    assert.deepEqual(rowParts(f16).map((p) => p.rows), [14, 14, 1]);
    const whole = storedFromHost(gpu, data, shape);
    assert.ok(whole instanceof Tensor && rowParts(whole).length === 1);
    assert.deepEqual(partRows(small, [4, 4], "f32"), [4]);
    const zero = zerosStored(small, shape);
    // A staging cap below the total: readStored reads in several groups and joins the parts.
    const [a, b, c, z] = await readStored(small, [f32, f16, whole, zero], { stagingBytes: 1000 });
    assert.deepEqual(a, data);
    assert.deepEqual(b, data, "every value is exact in f16");
    assert.deepEqual(c, data);
    assert.ok(z.every((x) => x === 0));
    const next = data.map((x) => -x);
    writeStored(f32, next);
    assert.deepEqual((await readStored(small, [f32]))[0], next);
    for (const t of [f32, f16, whole, zero]) t.release();
  },
});

Deno.test({
  name: "requestGpu takes a tensor limit from its options or from CRUCIBLE_TENSOR_LIMIT, and refuses a bad one by name",
  ignore: noGpu,
  async fn() {
    // Past the binding limit is past the adapter's own tensor limit, whatever this process's variable says.
    const past = (await testGpu()).limits.maxStorageBufferBindingSize + 4;
    const before = Deno.env.get(TENSOR_LIMIT_ENV);
    const created: Gpu[] = [];
    try {
      created.push(await requestGpu({ tensorLimit: 4096 }));
      Deno.env.set(TENSOR_LIMIT_ENV, "8192");
      created.push(await requestGpu());
      created.push(await requestGpu({ tensorLimit: 1024 }));
      assert.deepEqual(created.map((g) => g.tensorLimit), [4096, 8192, 1024], "the option wins over the variable");
      Deno.env.set(TENSOR_LIMIT_ENV, "lots");
      await assert.rejects(() => requestGpu(), /CRUCIBLE_TENSOR_LIMIT=NaN must be a positive multiple of 4 bytes/);
      Deno.env.set(TENSOR_LIMIT_ENV, String(past));
      await assert.rejects(() => requestGpu(), /CRUCIBLE_TENSOR_LIMIT=\d+ exceeds the adapter's own limit/);
      Deno.env.delete(TENSOR_LIMIT_ENV);
      await assert.rejects(() => requestGpu({ tensorLimit: 6 }), /Tensor limit 6 must be a positive multiple of 4/);
    } finally {
      if (before === undefined) Deno.env.delete(TENSOR_LIMIT_ENV);
      else Deno.env.set(TENSOR_LIMIT_ENV, before);
      for (const g of created) g.device.destroy();
    }
  },
});
