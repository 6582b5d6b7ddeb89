// What the studio page says when something goes wrong: the browsers that have WebGPU and the flag Linux needs, the
// insecure page, a lost device (which keeps the checkpoints), the GPU out of memory (what to lower), a model folder
// that will not load (named), and any other error by its own message, never its stack.
import assert from "node:assert/strict";
import { messageOf, noAdapterMessage, noWebGpuMessage, troubleOf } from "../../src/studio/messages.ts";

Deno.test("no WebGPU: the browsers and versions that have it, and the flag for Chromium on Linux", () => {
  const m = noWebGpuMessage(true);
  assert.match(m, /^This browser has no WebGPU/);
  assert.match(m, /Chrome and Edge 113 or later/);
  assert.match(m, /Safari 26/);
  assert.match(m, /Firefox 141/);
  assert.match(m, /--enable-unsafe-webgpu/);
  assert.match(noWebGpuMessage(false), /not a secure context.*http:\/\/127\.0\.0\.1:PORT/);
  assert.match(noAdapterMessage(), /found no GPU adapter.*chrome:\/\/gpu/);
});

Deno.test("a run's failure is named by kind: lost device, out of memory, model folder, else its message", () => {
  const lost = troubleOf(new Error("mapAsync failed"), { lost: { reason: "unknown", message: "GPU process crashed" } });
  assert.equal(lost.kind, "lost");
  assert.match(lost.message, /^The GPU device was lost \(unknown: GPU process crashed\).*checkpoints saved so far/);
  const oom = troubleOf(new Error("Out of memory while creating buffer"), {});
  assert.equal(oom.kind, "memory");
  assert.match(oom.message, /ran out of memory.*Lower the tasks per step or the group size/);
  const model = troubleOf(new SyntaxError("Reading m/config.json: Unexpected token"), { loading: "m" });
  assert.deepEqual(model, {
    kind: "model",
    message: "The model folder m could not be loaded: Reading m/config.json: Unexpected token",
  });
  const other = troubleOf(new RangeError("actor.lr must be positive"), {});
  assert.deepEqual(other, { kind: "error", message: "actor.lr must be positive" });
  assert.doesNotMatch(other.message, /at /);
  assert.equal(messageOf("plain"), "plain");
});
