// The public API: mod.ts's groups, their examples (each run here as written), the RL functions on plain arrays,
// and no internals in the public face.
import assert from "node:assert/strict";
import * as crucible from "../mod.ts";
import { aggregateLoss, grpoAdvantages, klPenalty, rlooAdvantages } from "../mod.ts";
import { noGpu } from "./no_gpu.ts";
import { runDeno } from "./subprocess.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const source = Deno.readTextFileSync(`${ROOT}mod.ts`);
const examples = [...source.matchAll(/ \* ## (.+)\n[\s\S]*? \* ```ts\n([\s\S]*?) \* ```/g)].map((m) => ({
  group: m[1],
  code: m[2].split("\n").map((l) => l.replace(/^ \* ?/, "")).join("\n"),
}));

Deno.test("mod.ts's first comment is its module doc (@module), so the API reference opens on the overview", () => {
  const first = source.slice(0, source.indexOf("*/"));
  assert.ok(source.startsWith("/**"), "mod.ts opens with its doc comment");
  assert.match(first, /\n \* @module\n $/, "the overview ends with @module");
});

Deno.test("mod.ts documents five groups, each with an example", () => {
  assert.deepEqual(examples.map((e) => e.group), [
    "Runtime and kernels",
    "Model and tokenizers",
    "Environments and tasks",
    "RL math",
    "Training",
  ]);
});

/**
 * The example with every `statement; // value` line checked: the value (JSON) is what the line's expression, or the
 * name it declares, holds; numbers to the decimals the comment shows. Returns the code and how many lines it checks.
 */
function withChecks(code: string): { code: string; checks: number } {
  let checks = 0;
  const lines = code.split("\n").map((line, n) => {
    const m = line.match(/^(.*?);\s*\/\/\s*(.+)$/);
    if (!m) return line;
    try {
      JSON.parse(m[2]);
    } catch {
      return line; // a comment in words, not a value
    }
    const declared = m[1].match(/^const\s+(?:\[\s*(\w+)\s*\]|\{\s*(\w+)\s*\}|(\w+))\s*=/);
    const name = declared ? declared[1] ?? declared[2] ?? declared[3] : undefined;
    checks++;
    const check = `__expect(${name ?? `(${m[1]})`}, ${m[2]}, ${JSON.stringify(`line ${n + 1}: ${m[1].trim()}`)});`;
    return name ? `${m[1]}; ${check}` : check;
  });
  return { code: `${EXPECT}\n${lines.join("\n")}`, checks };
}

/** The checker the rewritten examples call: exits 1 with both values on a mismatch. */
const EXPECT = `function __expect(got, want, where) {
  const close = (g, w) => typeof w === "number"
    ? typeof g === "number" && Math.abs(g - w) <= 0.5 * 10 ** -((String(w).split(".")[1] ?? "").length)
    : Array.isArray(w) ? (Array.isArray(g) || ArrayBuffer.isView(g)) && g.length === w.length && w.every((x, i) => close(g[i], x))
    : g === w;
  if (!close(got, want)) {
    console.error(\`\${where}: got \${JSON.stringify(ArrayBuffer.isView(got) ? [...got] : got)}, the comment says \${JSON.stringify(want)}\`);
    Deno.exit(1);
  }
}`;

Deno.test("withChecks turns value comments into checks and the checker refuses a wrong value", async () => {
  const { code, checks } = withChecks("const [x] = [[1, 2]]; // [1, 2]\nMath.PI; // 3.14\nlet y = 1; // one");
  assert.equal(checks, 2);
  const run = async (c: string) => {
    const file = await Deno.makeTempFile({ suffix: ".js" });
    try {
      await Deno.writeTextFile(file, c);
      return await runDeno(["run", file]);
    } finally {
      await Deno.remove(file);
    }
  };
  assert.equal((await run(code)).code, 0);
  const wrong = await run(withChecks("Math.PI; // 3.15").code);
  assert.equal(wrong.code, 1);
  assert.match(wrong.err, /Math\.PI: got 3\.14159\d*, the comment says 3\.15/);
});

for (const e of examples) {
  const gpu = /getGpu/.test(e.code);
  Deno.test({
    name: `the "${e.group}" example of mod.ts runs and gives the values its comments state`,
    ignore: gpu && noGpu,
    async fn() {
      const { code, checks } = withChecks(e.code);
      assert.ok(checks >= 1, `the "${e.group}" example states no value to check (end a line with // <value>)`);
      const file = await Deno.makeTempFile({ dir: ROOT, prefix: ".example-", suffix: ".ts" });
      try {
        await Deno.writeTextFile(file, code.replaceAll('"./mod.ts"', `"${ROOT}mod.ts"`));
        const r = await runDeno(["run", "-A", file]);
        assert.equal(r.code, 0, r.err);
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
