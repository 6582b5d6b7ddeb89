// What a worker checks of a policy version before it samples (src/cluster/weights.ts checkTensors): exactly its
// model's tensors, of their shapes, stored as f32, every value finite, and the version it asked for. Each case breaks
// one thing of a good version. No server.
import assert from "node:assert/strict";
import { checkTensors } from "../../src/cluster/weights.ts";
import { parseSafetensors, serializeSafetensors } from "../../src/model/safetensors.ts";

const table = [{ name: "a", shape: [2, 3] }, { name: "b", shape: [3] }];

/** A version as the learner publishes it (f32 safetensors with its number), read back as a worker reads it. */
function version(
  tensors: [string, number[], number[]][],
  o: { version?: string; dtype?: "f32" | "f16" } = {},
) {
  const map = new Map(tensors.map(([n, shape, data]) => [n, { shape, data: Float32Array.from(data) }]));
  const metadata: Record<string, string> = o.version === undefined ? {} : { crucible_policy_version: o.version };
  return parseSafetensors(serializeSafetensors(map, { metadata, dtype: o.dtype }));
}

const good = (): [string, number[], number[]][] => [["a", [2, 3], [1, 2, 3, 4, 5, 6]], ["b", [3], [0, -1, 0.5]]];

Deno.test("a version that is the model's table, f32 and finite, of the version asked for, passes", () => {
  const v = version(good(), { version: "4" });
  checkTensors(4, v.tensors, v.metadata, table);
});

Deno.test("a version is refused for a wrong shape, a missing or extra tensor, f16, a NaN or another version", () => {
  const refused = (v: ReturnType<typeof version>, pattern: RegExp) =>
    assert.throws(() => checkTensors(4, v.tensors, v.metadata, table), (e: Error) => {
      assert.ok(e instanceof TypeError);
      assert.match(e.message, /^Policy version 4: /);
      assert.match(e.message, pattern);
      return true;
    });
  const g = good();
  refused(version([g[0], ["b", [1, 3], [0, -1, 0.5]]], { version: "4" }), /b has shape \[1,3\], not \[3\]/);
  refused(version([g[0]], { version: "4" }), /lacks b/);
  refused(version([...g, ["c", [1], [0]]], { version: "4" }), /holds c, which this model has not/);
  refused(version(g, { version: "4", dtype: "f16" }), /a is stored as f16, not f32/);
  refused(version([g[0], ["b", [3], [0, NaN, 0.5]]], { version: "4" }), /b\[1\] is NaN/);
  refused(version([g[0], ["b", [3], [0, Infinity, 0.5]]], { version: "4" }), /b\[1\] is Infinity/);
  refused(version(g, { version: "5" }), /the file says it is version 5/);
  refused(version(g), /the file says it is version \(none\)/);
});
