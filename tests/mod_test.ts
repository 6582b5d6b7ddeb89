// The public API: mod.ts's groups, their examples (each run here as written), the RL functions on plain arrays,
// and no internals in the public face.
import assert from "node:assert/strict";
import * as crucible from "../mod.ts";
import { aggregateLoss, grpoAdvantages, klPenalty, rlooAdvantages } from "../mod.ts";
import { noGpu } from "./no_gpu.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const source = Deno.readTextFileSync(`${ROOT}mod.ts`);
const examples = [...source.matchAll(/ \* ## (.+)\n[\s\S]*? \* ```ts\n([\s\S]*?) \* ```/g)].map((m) => ({
  group: m[1],
  code: m[2].split("\n").map((l) => l.replace(/^ \* ?/, "")).join("\n"),
}));

Deno.test("mod.ts documents five groups, each with an example", () => {
  assert.deepEqual(examples.map((e) => e.group), [
    "Runtime and kernels",
    "Model and tokenizers",
    "Environments and tasks",
    "RL math",
    "Training",
  ]);
});

for (const e of examples) {
  const gpu = /getGpu/.test(e.code);
  Deno.test({
    name: `the "${e.group}" example of mod.ts runs`,
    ignore: gpu && noGpu,
    async fn() {
      const file = await Deno.makeTempFile({ dir: ROOT, prefix: ".example-", suffix: ".ts" });
      try {
        await Deno.writeTextFile(file, e.code.replaceAll('"./mod.ts"', `"${ROOT}mod.ts"`));
        const r = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", file], cwd: ROOT, stderr: "piped" })
          .output();
        assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
      } finally {
        await Deno.remove(file);
      }
    },
  });
}

Deno.test("mod.ts exports the RL functions on plain arrays, each returning numbers", () => {
  assert.deepEqual(grpoAdvantages([1, 0, 1, 1], [0, 0, 1, 1]).map((x) => +x.toFixed(4)), [0.7071, -0.7071, 0, 0]);
  assert.deepEqual(rlooAdvantages([1, 0, 0], [0, 0, 0]), [1, -0.5, -0.5]);
  assert.deepEqual(klPenalty([-1], [-1], "k3"), [0]);
  assert.equal(aggregateLoss([[1, 3], [2]], [[1, 1], [1]], "token-mean"), 2);
});

Deno.test("the public face holds no internals", () => {
  for (const internal of ["BufferPool", "poolOf", "foldGrid", "UniformLayout", "uniforms", "drawUniforms"]) {
    assert.ok(!(internal in crucible), `${internal} is exported`);
  }
});
