// A LoRA run end to end on a minimal budget, as a user runs it (subprocesses): verl's names set it up; the base is a
// Hugging Face directory and stays frozen; each checkpoint is a PEFT adapter with the adapter's moments and no copy
// of the base; the KL term is measured against the base with the adapter off; the merged directory is written; a
// run killed mid-SFT or mid-update resumes to bit-identical adapters; `deno task eval --adapter` scores the final
// adapter as the run's own final evaluation did.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { configSource } from "../../src/config/presets.ts";
import { loadModelDir, saveModelDir } from "../../src/model/model_dir.ts";
import { loadSafetensors } from "../../src/model/safetensors.ts";
import { configuredTask, loadModel } from "../../src/train/setup.ts";
import { noGpu } from "../no_gpu.ts";
import { runCli, sha } from "../subprocess.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../bench/smoke_run.ts";

function budget(base: string): string[] {
  return [
    `actor_rollout_ref.model.path=${base}`,
    "actor_rollout_ref.model.lora_rank=4",
    "actor_rollout_ref.model.lora_alpha=8",
    "actor_rollout_ref.model.target_modules=[q_proj,v_proj,up_proj]",
    "model.save_merged=true",
    ...SMOKE_RUN,
    "actor.lr=0.05",
    "actor.use_kl_loss=true",
    "actor.kl_loss_coef=0.1",
    "sft.epochs=0.03",
    "sft.batch_tokens=1024",
    "sft.lr=0.05",
    "trainer.total_steps=3",
    "trainer.test_freq=0",
  ];
}

/** The built-in tiny model of tiny.yaml saved as a Hugging Face directory: the runs' frozen base. */
async function baseDir(dir: string): Promise<string> {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  const c = resolveConfig(await configSource("textcraft"), [`model.tiny=${dir}/tiny.yaml`, "model.path=null"]);
  const host = await loadModel(c, (await configuredTask(c)).task);
  await saveModelDir(`${dir}/base`, { config: host.config, tensors: host.tensors, tokenizer: host.tokenizer });
  return `${dir}/base`;
}

Deno.test({
  name: "a LoRA run: PEFT checkpoints without the base, KL against the base, merged output, bit-identical resume",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const base = await baseDir(dir);
    const baseBytes = await sha(`${base}/model.safetensors`);
    const straight = await runCli(["train", "textcraft", "--run-dir", `${dir}/straight`, ...budget(base)]);
    assert.equal(straight.code, 0, straight.err);
    const final = `${dir}/straight/checkpoints/final`;
    const files = [...Deno.readDirSync(final)].map((e) => e.name).sort();
    assert.deepEqual(files, [
      "adapter_config.json",
      "adapter_model.safetensors",
      "crucible.json",
      "optimizer.safetensors",
      "trainer_state.json",
    ]);
    const peft = JSON.parse(await Deno.readTextFile(`${final}/adapter_config.json`));
    assert.deepEqual([peft.r, peft.lora_alpha, peft.target_modules], [4, 8, ["q_proj", "v_proj", "up_proj"]]);
    assert.equal(peft.base_model_name_or_path, base);
    const adapter = await loadSafetensors(`${final}/adapter_model.safetensors`);
    assert.equal(adapter.size, 1 * 3 * 2);
    const b = adapter.get("base_model.model.model.layers.0.mlp.up_proj.lora_B.weight")!;
    assert.ok(b.data.some((x) => x !== 0), "the adapter trained");
    const moments = [...(await loadSafetensors(`${final}/optimizer.safetensors`)).keys()];
    assert.equal(moments.length, 2 * adapter.size);
    assert.ok(moments.every((k) => /^[mv]\.model\.layers\.0\.\w+\.\w+\.lora_[AB]\.weight$/.test(k)), moments[0]);
    assert.equal(await sha(`${base}/model.safetensors`), baseBytes, "the base on disk is untouched");
    // No reference copy was saved: the KL is against the base with the adapter off, and it grows from 0.
    assert.ok(!Deno.readDirSync(`${dir}/straight/checkpoints`).some((e) => e.name === "rl-reference"));
    const rl = Deno.readTextFileSync(`${dir}/straight/metrics.jsonl`).trim().split("\n").map((l) => JSON.parse(l))
      .filter((m) => m.phase === "rl");
    assert.ok(rl.every((m) => Number.isFinite(m.kl)) && rl.some((m) => m.kl > 0), JSON.stringify(rl.map((m) => m.kl)));
    const merged = await loadModelDir(`${dir}/straight/checkpoints/final-merged`);
    assert.ok(merged.tokenizer);
    const before = await loadModelDir(base);
    const q = "model.layers.0.self_attn.q_proj.weight", k = "model.layers.0.self_attn.k_proj.weight";
    assert.ok(merged.tensors.get(q)!.some((x, i) => x !== before.tensors.get(q)![i]), "q_proj merged");
    assert.deepEqual(merged.tensors.get(k), before.tensors.get(k), "k_proj is not targeted");

    for (const moment of ["sft step 1", "rl update 2"]) {
      const run = `${dir}/k-${moment.replaceAll(" ", "-")}`;
      const killed = await runCli(["train", "textcraft", "--run-dir", run, ...budget(base)], {
        env: { CRUCIBLE_KILL_AT: moment },
      });
      assert.equal(killed.signal, "SIGKILL", `${moment}: ${killed.err}`);
      const resumed = await runCli(["train", "--resume", run]);
      assert.equal(resumed.code, 0, `${moment}: ${resumed.err}`);
      for (const f of ["adapter_model.safetensors", "optimizer.safetensors"]) {
        assert.equal(await sha(`${run}/checkpoints/final/${f}`), await sha(`${final}/${f}`), `${moment}: ${f}`);
      }
    }

    const ev = await runCli(["eval", "--model", base, "--adapter", final, "--limit", "2", "--json"]);
    assert.equal(ev.code, 0, ev.err);
    const got = JSON.parse(ev.out.trim().split("\n").at(-1)!);
    const want = Deno.readTextFileSync(`${dir}/straight/evals.jsonl`).trim().split("\n").map((l) => JSON.parse(l))
      .filter((e) => e.phase === "final")[0];
    assert.equal(got.avg, want.avg);
  },
});

Deno.test({
  name: "bad LoRA input is refused by name: a rank past a layer's width, a target that matches no layer",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const base = await baseDir(dir);
    const wide = await runCli(["train", "textcraft", "--run-dir", `${dir}/a`, ...budget(base), "model.lora_rank=32"]);
    assert.notEqual(wide.code, 0);
    assert.match(wide.err, /model\.lora_rank 32 is larger than the width of \w+ \[\d+, \d+\]: .* at most 8/);
    const bad = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/b`,
      ...budget(base),
      "model.target_modules=[qkv]",
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /model\.target_modules entry "qkv" matches no layer/);
    const zero = await runCli(["train", "textcraft", "--run-dir", `${dir}/c`, ...budget(base), "model.lora_rank=0"]);
    assert.notEqual(zero.code, 0);
    assert.match(zero.err, /"model\.lora_alpha": is a LoRA setting, but model\.lora_rank is 0/);
  },
});
