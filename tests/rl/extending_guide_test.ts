// docs/extending-rl.md's example holds: its estimator file, written out as the guide shows it, registers, is accepted
// by the config and computes what the guide's own test says, through the RL step's advantages; and that test passes.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import type { AdvantageEstimator } from "../../src/rl/advantages.ts";
import { ADVANTAGE_ESTIMATORS } from "../../src/rl/estimators.ts";
import { tokenAdvantages } from "../../src/train/rl_step.ts";
import { runDeno } from "../subprocess.ts";
import { episode } from "./episodes.ts";

const ROOT = new URL("../../", import.meta.url);
const guide = await Deno.readTextFile(new URL("docs/extending-rl.md", ROOT));
const blocks = [...guide.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1]);
const estimatorFile = blocks.find((b) => b.startsWith("// src/rl/reinforce.ts\n"));
const testFile = blocks.find((b) => b.includes('from "../../src/rl/reinforce.ts"'));

/** The guide's estimator written to a temporary file, its imports pointing at src/rl. */
async function writtenOut(dir: string): Promise<string> {
  const path = `${dir}/reinforce.ts`;
  await Deno.writeTextFile(path, estimatorFile!.replaceAll('"./', `"${new URL("src/rl/", ROOT).href}`));
  return path;
}

Deno.test("the guide's estimator registers, is accepted by the config and computes its advantages", async () => {
  assert.ok(estimatorFile && testFile, "the guide shows the estimator's file and its test");
  const dir = await Deno.makeTempDir();
  try {
    const { reinforce } = await import(await writtenOut(dir)) as { reinforce: AdvantageEstimator };
    assert.equal(reinforce.name, "reinforce");
    ADVANTAGE_ESTIMATORS.register(reinforce);
    try {
      const c = resolveConfig({ text: "task: textcraft\n", name: "t.yaml" }, ["algorithm.adv_estimator=reinforce"]);
      assert.deepEqual(tokenAdvantages(c, [episode(1, [1, 0, 1]), episode(0.25, [1])]), [[1, 0, 1], [0.25]]);
    } finally {
      ADVANTAGE_ESTIMATORS.unregister("reinforce");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the guide's test of its estimator passes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = await writtenOut(dir);
    await Deno.writeTextFile(`${dir}/reinforce_test.ts`, testFile!.replace("../../src/rl/reinforce.ts", path));
    const r = await runDeno(["test", "--lock=tests/deno.lock", `${dir}/reinforce_test.ts`], { env: { NO_COLOR: "1" } });
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /1 passed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
