// transformers.js loads what `deno task export` writes and generates the same greedy ids as Crucible's onnx engine
// (itself checked against Crucible's kernels in export_test.ts), for the tiny model and each architecture. It runs
// under Deno on onnxruntime-node, through Deno's Node-API support; see transformers_js_generate.ts for why it runs
// in a subprocess with its own lockfile.
import assert from "node:assert/strict";
import { stopTokenIds } from "../../src/model/model_dir.ts";
import { exportModel, onnxBytes } from "../../src/onnx/export.ts";
import { createSession, loadOrt } from "../../src/onnx/runtime.ts";
import { OnnxSampler } from "../../src/onnx/sampler.ts";
import { runDeno } from "../subprocess.ts";
import { saveTestModel, testModels } from "./models.ts";

const NEW_TOKENS = 16;

for (const m of testModels()) {
  Deno.test(`transformers.js generates the onnx engine's greedy ids from the exported ${m.name}`, async () => {
    const dir = await saveTestModel(m);
    await exportModel(dir, `${dir}-onnx`);
    const prompt = [2, 9, 4, 17, 5].map((i) => i % m.config.vocabSize);
    const r = await runDeno([
      ...["run", "-A", "--no-config", "--frozen", "--lock=tests/onnx/transformers_js.lock", "--node-modules-dir=none"],
      ...["tests/onnx/transformers_js_generate.ts", `${dir}-onnx`, prompt.join(","), String(NEW_TOKENS)],
    ]);
    assert.equal(r.code, 0, r.err);
    const theirs = JSON.parse(r.out.trim().split("\n").at(-1)!);

    const s = new OnnxSampler(await loadOrt(), await createSession(await onnxBytes(m, "f32")), m.config, {
      slots: 1,
      maxLen: 64,
    });
    const stopIds = stopTokenIds({ config: m.config, tokenizer: m.tokenizer });
    const [ours] = await s.decode([s.open(prompt, 0)], [{ maxNewTokens: NEW_TOKENS, stopIds }], { temperature: 0 });
    assert.ok(ours.ids.length >= 4, `only ${ours.ids.length} ids to compare`);
    assert.deepEqual(theirs.ids, ours.ids);
    assert.ok(theirs.runtime?.node, `transformers.js ran on ${JSON.stringify(theirs.runtime)}`);
  });
}
