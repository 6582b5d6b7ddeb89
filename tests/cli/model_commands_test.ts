// The generate and grad commands, run as a user runs them (a subprocess on a model directory), against the f64
// reference: greedy ids, the loss and every gradient.
import assert from "node:assert/strict";
import { parseModelConfig } from "../../src/model/config.ts";
import { saveModelDir } from "../../src/model/model_dir.ts";
import { initParams } from "../../src/model/init.ts";
import { loadSafetensors } from "../../src/model/safetensors.ts";
import { paramTable } from "../../src/model/params.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { assertClose } from "../reference/check.ts";
import { numericGrad } from "../reference/finite_diff.ts";
import { modelLogitsRef, type RefParams } from "../reference/model.ts";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";

async function tinyModelDir(): Promise<
  { dir: string; params: RefParams; config: ReturnType<typeof parseModelConfig> }
> {
  const tokenizer = wordTokenizer([
    "craft 4 oak planks using 1 oak log",
    "get 1 oak log",
    "Inventory: [oak planks] (4)",
  ]);
  const config = parseModelConfig({
    model_type: "qwen2",
    vocab_size: tokenizer.vocabSize,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 2,
    num_key_value_heads: 1,
    tie_word_embeddings: true,
    max_position_embeddings: 128,
    eos_token_id: tokenizer.id("<|im_end|>"),
  });
  const tensors = initParams(config, 5, { std: 0.5 });
  const dir = await Deno.makeTempDir();
  await saveModelDir(`${dir}/model`, { config, tensors, tokenizer });
  const params = new Map([...tensors].map(([k, v]) => [k, Float64Array.from(v)]));
  return { dir: `${dir}/model`, params, config };
}

Deno.test({
  name: "generate --temperature 0 --json prints the reference's greedy ids and their text",
  ignore: noGpu,
  async fn() {
    const { dir, params, config } = await tinyModelDir();
    const r = await runCli([
      "generate",
      "--model",
      dir,
      "--prompt-ids",
      "3,7,2",
      "--max-tokens",
      "6",
      "--temperature",
      "0",
      "--json",
    ]);
    assert.equal(r.code, 0, r.err);
    const out = JSON.parse(r.out.trim().split("\n").at(-1)!);
    const seq = [3, 7, 2], want: number[] = [];
    for (let i = 0; i < 6; i++) {
      const row = modelLogitsRef(config, params, { seqs: [seq] }).subarray((seq.length - 1) * config.vocabSize);
      let best = 0;
      for (let v = 1; v < config.vocabSize; v++) if (row[v] > row[best]) best = v;
      want.push(best);
      seq.push(best);
      if (config.eosTokenIds.includes(best)) break;
    }
    assert.deepEqual(out.ids, want);
    assert.equal(typeof out.text, "string");
    const bad = await runCli(["generate", "--model", dir, "--prompt-ids", "3", "--top-p", "2"]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--top-p must be a number in \[0, 1\], got "2"/);
  },
});

Deno.test({
  name: "grad writes the mean masked NLL and every parameter's gradient under its Hugging Face name",
  ignore: noGpu,
  async fn() {
    const { dir, params, config } = await tinyModelDir();
    const data = [{ ids: [1, 4, 6, 2, 5], mask: [0, 0, 1, 1, 1] }, { ids: [3, 3, 8], mask: [0, 1, 1] }];
    const file = `${dir}/../data.jsonl`, out = `${dir}/../grads.safetensors`;
    await Deno.writeTextFile(file, data.map((d) => JSON.stringify(d)).join("\n") + "\n");
    const r = await runCli(["grad", "--model", dir, "--data", file, "--out", out]);
    assert.equal(r.code, 0, r.err);
    const got = await loadSafetensors(out);
    const loss = (p: RefParams) => {
      let sum = 0, n = 0;
      for (const d of data) {
        const logits = modelLogitsRef(config, p, { seqs: [d.ids] });
        for (let t = 0; t + 1 < d.ids.length; t++) {
          if (!d.mask[t + 1]) continue;
          const row = logits.subarray(t * config.vocabSize, (t + 1) * config.vocabSize);
          const m = Math.max(...row);
          const lse = m + Math.log(row.reduce((a, z) => a + Math.exp(z - m), 0));
          sum -= row[d.ids[t + 1]] - lse;
          n++;
        }
      }
      return sum / n;
    };
    assertClose("loss", got.get("loss")!.data, [loss(params)], { atol: 1e-5, rtol: 1e-5 });
    for (const spec of paramTable(config)) {
      const fd = numericGrad((x) => loss(new Map(params).set(spec.name, x)), params.get(spec.name)!);
      assertClose(spec.name, got.get(spec.name)!.data, fd, { atol: 2e-5, rtol: 1e-3 });
    }
    const badData = `${dir}/../bad.jsonl`;
    await Deno.writeTextFile(badData, '{"ids": [1, 2], "mask": [1]}\n');
    const bad = await runCli(["grad", "--model", dir, "--data", badData, "--out", out]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /line 1: needs "ids" and "mask"/);
  },
});

Deno.test("raw operating-system errors become sentences; hub ids and folders without a model are explained", async () => {
  const { humanMessage } = await import("../../src/command/args.ts");
  const { loadModelDir } = await import("../../src/model/model_dir.ts");
  let raw: unknown;
  try {
    Deno.readTextFileSync("/nonexistent-crucible/x.json");
  } catch (e) {
    raw = e;
  }
  assert.equal(humanMessage(raw), "Cannot read /nonexistent-crucible/x.json: no such file or directory");
  assert.equal(humanMessage(new Error("plain")), "plain");
  await assert.rejects(
    () => loadModelDir("Qwen/Qwen2.5-0.5B-Instruct"),
    /Hugging Face Hub name, the commands. --model downloads it/,
  );
  const empty = await Deno.makeTempDir();
  await assert.rejects(() => loadModelDir(empty), /no config\.json, so it is not a model directory\. A Hugging Face/);
});
