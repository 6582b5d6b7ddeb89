/** Model directories: save/load/save byte identity, refusals naming the tensor, atomic saves; the initialiser. */
import assert from "node:assert/strict";
import { loadModelDir, saveModelDir, stopTokenIds } from "../../src/model/model_dir.ts";
import { type ModelConfig, parseModelConfig } from "../../src/model/config.ts";
import { initParams } from "../../src/model/init.ts";
import { LM_HEAD, paramTable } from "../../src/model/params.ts";
import { type HostTensor, saveSafetensors } from "../../src/model/safetensors.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";

const tokenizer = wordTokenizer(["Crafting commands:\ncraft 4 oak planks using 1 oak log", "Got 1 oak log"]);

function tiny(modelType: string, extra: Record<string, unknown> = {}): ModelConfig {
  return parseModelConfig({
    model_type: modelType,
    vocab_size: 128,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    eos_token_id: 2,
    ...extra,
  });
}

const CONFIGS: [string, ModelConfig][] = [
  ["qwen2 tied", tiny("qwen2", { tie_word_embeddings: true })],
  ["qwen3", tiny("qwen3", { head_dim: 8 })],
  ["llama", tiny("llama", { bos_token_id: 1 })],
];

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function files(dir: string): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const names = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  for (const name of names.sort()) out.set(name, await Deno.readFile(`${dir}/${name}`));
  return out;
}

Deno.test("checkpoint: save, load, save again gives identical bytes in every file (f32 and f16)", async () => {
  await withDir(async (root) => {
    for (const [what, config] of CONFIGS) {
      for (const dtype of ["f32", "f16"] as const) {
        const tensors = initParams(config, 7);
        await saveModelDir(`${root}/a`, { config, tensors, tokenizer, dtype, extra: { "run.json": { step: 3 } } });
        const loaded = await loadModelDir(`${root}/a`, { extra: ["run.json"] });
        assert.deepEqual(loaded.config, config, what);
        assert.deepEqual([...loaded.tensors.keys()], paramTable(config).map((p) => p.name), what);
        for (const [name, data] of tensors) {
          const expected = dtype === "f32" ? data : Float32Array.from(Float16Array.from(data));
          assert.deepEqual(loaded.tensors.get(name), expected, `${what} ${dtype} ${name}`);
        }
        assert.deepEqual(loaded.extra, { "run.json": { step: 3 } });
        await saveModelDir(`${root}/b`, {
          config: loaded.config,
          tensors: loaded.tensors,
          tokenizer: loaded.tokenizer,
          generationConfig: loaded.generationConfig,
          dtype,
          extra: loaded.extra,
        });
        const [a, b] = [await files(`${root}/a`), await files(`${root}/b`)];
        assert.deepEqual([...a.keys()], [
          "config.json",
          "generation_config.json",
          "model.safetensors",
          "run.json",
          "tokenizer.json",
          "tokenizer_config.json",
        ]);
        for (const [name, bytes] of a) assert.deepEqual(b.get(name), bytes, `${what} ${dtype}: ${name} differs`);
      }
    }
  });
});

Deno.test("checkpoint: the loaded tokenizer and generation config match what was saved", async () => {
  await withDir(async (dir) => {
    const config = CONFIGS[0][1];
    await saveModelDir(dir, { config, tensors: initParams(config, 1), tokenizer });
    const loaded = await loadModelDir(dir);
    const text = "craft 4 oak planks using 1 oak log";
    assert.deepEqual(loaded.tokenizer!.encode(text), tokenizer.encode(text));
    assert.deepEqual(loaded.generationConfig, { eos_token_id: 2, pad_token_id: 0 });
    assert.deepEqual(stopTokenIds({ ...loaded, generationConfig: { eos_token_id: [2, 0] } }), [2, 0]);
    const hf = JSON.parse(await Deno.readTextFile(`${dir}/config.json`));
    assert.equal(hf.tie_word_embeddings, true);
    assert.equal(hf.torch_dtype, "float32");
  });
});

Deno.test("checkpoint: loading names the missing, extra or misshapen tensor", async () => {
  await withDir(async (dir) => {
    const config = CONFIGS[1][1];
    await saveModelDir(dir, { config, tensors: initParams(config, 1) });
    const weights = `${dir}/model.safetensors`;
    const entries = () => entriesOf(config, 1);
    const k = "model.layers.1.self_attn.k_norm.weight";

    await saveSafetensors(weights, entries().filter(([n]) => n !== k));
    await assert.rejects(() => loadModelDir(dir), (e: Error) => e instanceof SyntaxError && e.message.includes(k));

    await saveSafetensors(weights, [...entries(), ["model.layers.0.self_attn.q_proj.bias", {
      shape: [32],
      data: new Float32Array(32),
    }]]);
    await assert.rejects(
      () => loadModelDir(dir),
      (e: Error) => e instanceof SyntaxError && /q_proj\.bias/.test(e.message),
    );

    await saveSafetensors(weights, entries().map(([n, t]) => [n, n === k ? { shape: [1, 8], data: t.data } : t]));
    await assert.rejects(
      () => loadModelDir(dir),
      (e: Error) => e instanceof TypeError && /k_norm.*\[1,8\].*\[8\]/.test(e.message),
    );

    await assert.rejects(
      () => saveModelDir(dir, { config: tiny("qwen2", { vocab_size: 64 }), tensors: new Map(), tokenizer }),
      /tokenizer\.json has \d+ ids but config\.json.s vocab_size \(the embedding.s rows\) is 64/,
    );
    await Deno.remove(weights);
    await assert.rejects(() => loadModelDir(dir), /has no weights \(model\.safetensors/);
    await assert.rejects(
      () => saveModelDir(dir, { config, tensors: new Map() }),
      /"model\.embed_tokens\.weight" is missing/,
    );
  });
});

Deno.test("checkpoint: a tied model's checkpoint that still carries lm_head.weight loads without it", async () => {
  await withDir(async (dir) => {
    const config = CONFIGS[0][1];
    await saveModelDir(dir, { config, tensors: initParams(config, 1) });
    const entries = entriesOf(config, 1);
    const head = { shape: [128, 16], data: new Float32Array(128 * 16) };
    await saveSafetensors(`${dir}/model.safetensors`, [...entries, [LM_HEAD, head]]);
    const loaded = await loadModelDir(dir);
    assert.ok(!loaded.tensors.has(LM_HEAD));
    assert.equal(loaded.tensors.size, paramTable(config).length);
  });
});

Deno.test("checkpoint: an interrupted save leaves the previous checkpoint loadable and unchanged", async () => {
  await withDir(async (root) => {
    const dir = `${root}/ckpt`;
    const config = CONFIGS[2][1];
    await saveModelDir(dir, { config, tensors: initParams(config, 1), tokenizer });
    const before = await files(dir);
    // Throws while writing the extra file, after model.safetensors of the new checkpoint is already written.
    const failing = {
      toJSON: () => {
        throw new Error("disk full");
      },
    };
    await assert.rejects(
      () => saveModelDir(dir, { config, tensors: initParams(config, 2), tokenizer, extra: { "state.json": failing } }),
      /disk full/,
    );
    assert.deepEqual(await files(dir), before);
    assert.deepEqual((await loadModelDir(dir)).tensors, initParams(config, 1));
    const left = [];
    for await (const e of Deno.readDir(root)) left.push(e.name);
    assert.deepEqual(left, ["ckpt"], "the temporary directory is removed");

    // A crash (no cleanup) leaves a half-written sibling, which neither loading nor the next save minds.
    await Deno.mkdir(`${dir}.tmp-crashed`);
    await Deno.writeTextFile(`${dir}.tmp-crashed/model.safetensors`, "garbage");
    await saveModelDir(dir, { config, tensors: initParams(config, 3) });
    assert.deepEqual((await loadModelDir(dir)).tensors, initParams(config, 3));
    assert.equal((await loadModelDir(dir)).tokenizer, undefined, "the new save replaced the whole directory");

    // A crash between the two renames leaves the old copy aside; loading says where it is.
    await Deno.rename(dir, `${dir}.old-123`);
    await assert.rejects(() => loadModelDir(dir), /ckpt\.old-123: rename it to/);
    await assert.rejects(
      () => saveModelDir(dir, { config, tensors: initParams(config, 1), extra: { "../x": 1 } }),
      RangeError,
    );
  });
});

Deno.test("init: deterministic per seed; normal matrices, unit norms, zero biases", () => {
  const config = CONFIGS[0][1];
  const a = initParams(config, 5), b = initParams(config, 5), c = initParams(config, 6);
  assert.deepEqual(a, b);
  const embed = a.get("model.embed_tokens.weight")!;
  assert.notDeepEqual(embed, c.get("model.embed_tokens.weight"));
  for (const p of paramTable(config)) {
    const data = a.get(p.name)!;
    assert.equal(data.length, p.shape.reduce((x, y) => x * y, 1), p.name);
    if (p.init === "ones") assert.ok(data.every((v) => v === 1), p.name);
    if (p.init === "zeros") assert.ok(data.every((v) => v === 0), p.name);
  }
  const big = initParams(tiny("llama", { hidden_size: 64, vocab_size: 4096 }), 1, { std: 0.5 }).get(LM_HEAD)!;
  const mean = big.reduce((s, v) => s + v, 0) / big.length;
  const std = Math.sqrt(big.reduce((s, v) => s + (v - mean) ** 2, 0) / big.length);
  assert.ok(Math.abs(mean) < 0.01 && Math.abs(std - 0.5) < 0.01, `mean ${mean} std ${std}`);
  // Seeds follow names: tensors of one shape differ; the same q_proj whether or not the architecture adds biases.
  const layer = "model.layers.0.self_attn";
  assert.notDeepEqual(a.get(`${layer}.k_proj.weight`), a.get(`${layer}.v_proj.weight`));
  const q = "model.layers.1.self_attn.q_proj.weight";
  assert.deepEqual(initParams(tiny("llama"), 9).get(q), initParams(tiny("qwen2"), 9).get(q));
  assert.throws(() => initParams(config, 1, { std: -1 }), RangeError);
});

/** Fresh tensors with their shapes, to write weight files by hand. */
function entriesOf(config: ModelConfig, seed: number): [string, HostTensor][] {
  const shapes = new Map(paramTable(config).map((p) => [p.name, p.shape]));
  return [...initParams(config, seed)].map(([name, data]) => [name, { shape: shapes.get(name)!, data }]);
}

Deno.test("an f32, f16 or bf16 model is saved in its own dtype and round-trips bit for bit", async () => {
  const config = tiny("qwen2", { tie_word_embeddings: true });
  for (const dtype of ["f32", "f16", "bf16"] as const) {
    await withDir(async (dir) => {
      const first = `${dir}/a`, second = `${dir}/b`;
      await saveModelDir(first, { config, tensors: initParams(config, 5, { std: 0.3 }), tokenizer, dtype });
      const loaded = await loadModelDir(first);
      assert.equal(loaded.dtype, dtype);
      assert.equal(
        JSON.parse(await Deno.readTextFile(`${first}/config.json`)).torch_dtype,
        {
          f32: "float32",
          f16: "float16",
          bf16: "bfloat16",
        }[dtype],
      );
      await saveModelDir(second, { config, tensors: loaded.tensors, tokenizer, dtype: loaded.dtype });
      assert.deepEqual(
        await Deno.readFile(`${second}/model.safetensors`),
        await Deno.readFile(`${first}/model.safetensors`),
      );
    });
  }
});

Deno.test("bf16 rounds to nearest, ties to even, as PyTorch does", async () => {
  const { parseSafetensors, serializeSafetensors } = await import("../../src/model/safetensors.ts");
  // 1 + 2^-8 is halfway between bf16's 1 and 1 + 2^-7: ties to even gives 1; just above it rounds up.
  const values = new Float32Array([1 + 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 1 + 3 * 2 ** -8, -2.5, 0]);
  const bytes = serializeSafetensors(new Map([["x", { shape: [5], data: values }]]), { dtype: "bf16" });
  const back = parseSafetensors(bytes).tensors.get("x")!;
  assert.equal(back.stored, "bf16");
  assert.deepEqual([...back.data], [1, 1 + 2 ** -7, 1 + 2 * 2 ** -7, -2.5, 0]);
});

Deno.test("a model whose weights hold a NaN or an infinity is refused at load, naming the tensor", async () => {
  const config = tiny("qwen2", { tie_word_embeddings: true });
  await withDir(async (dir) => {
    const tensors = initParams(config, 5, { std: 0.3 });
    tensors.get("model.norm.weight")![3] = NaN;
    await saveModelDir(dir, { config, tensors, tokenizer });
    await assert.rejects(
      () => loadModelDir(dir),
      /tensor "model\.norm\.weight" holds a non-finite value \(NaN at index 3\)/,
    );
  });
});
