// `deno task export` and `deno task eval --engine onnx` as a user runs them (subprocesses with the tasks' flags): the
// directory layout transformers.js reads, the decoder's inputs and outputs as Optimum names them, one clear message
// for each kind of bad input, and the same greedy episodes from both engines.
import assert from "node:assert/strict";
import { createSession } from "../../src/onnx/runtime.ts";
import { noGpu } from "../no_gpu.ts";
import { saveTestModel, testModels } from "../onnx/models.ts";
import { runDeno, TASK_FLAGS } from "../subprocess.ts";

const crucible = (args: string[]) => runDeno([...TASK_FLAGS, ...args]);

const [, QWEN25] = testModels();

Deno.test("deno task export writes onnx/model.onnx with Optimum's inputs and outputs, and the model's files", async () => {
  const dir = await saveTestModel(QWEN25);
  const out = `${dir}-onnx`;
  const r = await crucible(["export", "--model", dir, "--out", out, "--dtype", "f16"]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /Wrote .*onnx\/model\.onnx/);
  for (const f of ["config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"]) {
    await Deno.stat(`${out}/${f}`);
  }
  const config = JSON.parse(await Deno.readTextFile(`${out}/config.json`));
  assert.equal(config.model_type, "qwen2");
  assert.equal(config.tie_word_embeddings, false);
  const session = await createSession(await Deno.readFile(`${out}/onnx/model.onnx`));
  const L = QWEN25.config.numLayers;
  const cache = (prefix: string, kind: string[]) =>
    Array.from({ length: L }, (_, l) => kind.map((k) => `${prefix}.${l}.${k}`)).flat();
  assert.deepEqual(
    [...session.inputNames].sort(),
    ["attention_mask", "input_ids", "position_ids", ...cache("past_key_values", ["key", "value"])].sort(),
  );
  assert.deepEqual([...session.outputNames].sort(), ["logits", ...cache("present", ["key", "value"])].sort());
});

Deno.test("deno task export: a folder with no model, a missing folder and unsupported architectures, one message each", async () => {
  const empty = await Deno.makeTempDir();
  let r = await crucible(["export", "--model", empty]);
  assert.equal(r.code, 2);
  assert.equal(r.err.trim().split("\n").length, 1, r.err);
  assert.match(
    r.err,
    /^error: Exporting .*: the directory holds no model \(config\.json and weights\)\. A Hugging Face/,
  );
  r = await crucible(["export", "--model", `${empty}/nothing`]);
  assert.match(r.err, /^error: Exporting .*nothing: the directory does not exist/);

  const weights = await Deno.readFile(`${await saveTestModel(QWEN25)}/model.safetensors`);
  const unsupported: [Record<string, unknown>, RegExp][] = [
    [
      { model_type: "gemma", architectures: ["GemmaForCausalLM"] },
      /GemmaForCausalLM \(model_type gemma\) .*\(1 \+ w\)/,
    ],
    [{ model_type: "mixtral" }, /mixtral is not supported: .*mixture-of-experts routing/],
    [{ model_type: "llama", rope_scaling: { rope_type: "llama3", factor: 8 } }, /llama .*scaled RoPE/],
  ];
  for (const [fields, message] of unsupported) {
    const dir = await Deno.makeTempDir();
    await Deno.writeFile(`${dir}/model.safetensors`, weights);
    const base = {
      vocab_size: 40,
      hidden_size: 32,
      intermediate_size: 40,
      num_hidden_layers: 2,
      num_attention_heads: 4,
    };
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify({ ...base, ...fields }));
    r = await crucible(["export", "--model", dir]);
    assert.equal(r.code, 2);
    assert.equal(r.err.trim().split("\n").length, 1, r.err);
    assert.match(r.err, message);
    assert.match(r.err, /the exporter has no ONNX graph for/);
  }
});

Deno.test({
  name: "deno task eval --engine onnx plays the same greedy episodes as the WGSL engine",
  ignore: noGpu,
  async fn() {
    const dir = await saveTestModel(testModels()[0]);
    const episodes = (engine: string) => `${dir}/${engine}.jsonl`;
    const common = ["--model", dir, "--limit", "3", "--max-rounds", "3", "--json"];
    const runs = await Promise.all(
      ["wgsl", "onnx"].map((engine) =>
        crucible(["eval", ...common, "--engine", engine, "--episodes", episodes(engine)])
      ),
    );
    for (const r of runs) assert.equal(r.code, 0, r.err);
    const [wgsl, onnx] = runs.map((r) => JSON.parse(r.out.trim().split("\n").at(-1)!));
    assert.equal(onnx.avg, wgsl.avg);
    const turns = async (engine: string) =>
      (await Deno.readTextFile(episodes(engine))).trim().split("\n").map((l) => {
        const e = JSON.parse(l);
        return { turns: e.turns, conversation: e.conversation };
      });
    const [a, b] = [await turns("wgsl"), await turns("onnx")];
    assert.equal(a.length, 3);
    assert.deepEqual(b, a);
    const bad = await crucible(["eval", "--model", dir, "--engine", "tpu"]);
    assert.match(bad.err, /--engine must be wgsl, onnx or onnx-webgpu, got "tpu"/);
  },
});
