import assert from "node:assert/strict";
import { parse } from "yaml";
import { applyOverride, resolveConfig } from "../../src/config/load.ts";
import { runCli } from "../subprocess.ts";

const src = (text: string) => ({ text, name: "test.yaml" });

Deno.test("defaults fill what a YAML leaves out, and overrides apply last with YAML values", () => {
  const c = resolveConfig(src("actor:\n  lr: 2.0e-5\nrollout:\n  n: 4\n"), [
    "algorithm.rounds_ctrl.rounds=[10,20,30]",
    "rollout.n=16",
    "model.path=null",
    "actor.kl_loss_type=k3+",
  ]);
  assert.equal(c.actor.lr, 2e-5);
  assert.equal(c.rollout.n, 16);
  assert.deepEqual(c.algorithm.rounds_ctrl.rounds, [10, 20, 30]);
  assert.equal(c.actor.kl_loss_type, "k3+");
  assert.equal(c.actor.loss_agg_mode, "token-mean");
  assert.equal(c.model.path, null);
  assert.equal(c.task, "textcraft");
});

Deno.test("an unknown key or a wrong type stops with the key's path and what was expected", () => {
  assert.throws(() => resolveConfig(src("actor:\n  lrr: 1\n")), /unknown config key "actor\.lrr"/);
  assert.throws(() => resolveConfig(src(""), ["actor.lr=fast"]), /"actor\.lr".*number/i);
  assert.throws(() => resolveConfig(src(""), ["rollout.n=0"]), /"rollout\.n"/);
  assert.throws(() => resolveConfig(src(""), ["actor.loss_agg_mode=mean"]), /"actor\.loss_agg_mode"/);
  assert.throws(() => resolveConfig(src("a: [1"), []), SyntaxError);
  assert.throws(() => resolveConfig(src("- 1\n"), []), /top level must be a mapping/);
  assert.throws(() => applyOverride({}, "actor.lr"), /key\.path=value/);
  assert.throws(() => applyOverride({ actor: 3 }, "actor.lr=1"), /holds a value/);
});

Deno.test("a round schedule whose stages shrink is refused when the config is read, naming the key and value", () => {
  assert.throws(
    () => resolveConfig(src(""), ["algorithm.rounds_ctrl.rounds=[30,10]"]),
    /config key "algorithm\.rounds_ctrl\.rounds": is \[30, 10\]: ScalingInter rounds must not decrease.*type=fixed/,
  );
  // A fixed schedule keeps the last of its rounds, so their order is free; a growing one is a schedule.
  const fixed = resolveConfig(src(""), ["algorithm.rounds_ctrl.rounds=[30,10]", "algorithm.rounds_ctrl.type=fixed"]);
  assert.deepEqual(fixed.algorithm.rounds_ctrl.rounds, [30, 10]);
  assert.deepEqual(resolveConfig(src(""), ["algorithm.rounds_ctrl.rounds=[10,10,30]"]).algorithm.rounds_ctrl.rounds, [
    10,
    10,
    30,
  ]);
});

Deno.test("every shipped config resolves against the schema", async () => {
  const { configSource, PRESET_NAMES } = await import("../../src/config/presets.ts");
  const { curriculumConfigs, isCurriculum } = await import("../../src/train/curriculum.ts");
  for (const name of PRESET_NAMES) {
    const source = await configSource(name);
    // A curriculum (bfcl) resolves stage by stage.
    const c = isCurriculum(source)
      ? (await curriculumConfigs(source, [])).stageConfig(0, undefined)
      : resolveConfig(source);
    assert.ok(c.task.length > 0, name);
  }
  await assert.rejects(configSource("nope"), /Unknown config "nope"; use one of textcraft, /);
  await assert.rejects(
    configSource("textcraft_smok"),
    /Unknown config "textcraft_smok"; did you mean "textcraft_smoke"\?/,
  );
  await assert.rejects(configSource("webshop_qwen"), /did you mean "webshop_qwen2\.5"\?/);
});

Deno.test("an unknown key names the valid keys at its level and the closest one", () => {
  assert.throws(
    () => resolveConfig({ text: "", name: "x" }, ["actor.lrr=1"]),
    /unknown config key "actor\.lrr"; did you mean "actor\.lr"\? The keys of actor are: lr, lr_schedule, betas/,
  );
  assert.throws(() => resolveConfig({ text: "trainr: {}\n", name: "y.yaml" }), /did you mean "trainer"/);
  assert.throws(
    () => resolveConfig({ text: "", name: "z" }, ["actor.zzzzzzzz=1"]),
    (e: Error) => !/did you/.test(e.message),
  );
});

Deno.test("verl and AgentGym-RL command lines work as written: aliases, Hydra's +key, a scalar round count", () => {
  const notes: string[] = [];
  const c = resolveConfig({ text: "", name: "x" }, [
    "actor_rollout_ref.actor.optim.lr=2e-6",
    "+actor_rollout_ref.rollout.n=4",
    "++data.max_prompt_length=900",
    "data.max_response_length=3000",
    "actor_rollout_ref.rollout.max_tokens=200",
    "algorithm.rounds_ctrl.type=fixed",
    "algorithm.rounds_ctrl.rounds=20",
    "trainer.total_training_steps=7",
    "actor_rollout_ref.actor.clip_ratio=0.3",
    "actor_rollout_ref.actor.kl_loss_type=low_var_kl",
    "actor_rollout_ref.rollout.gpu_memory_utilization=0.7",
    "actor_rollout_ref.rollout.tensor_model_parallel_size=1",
  ], { onNote: (n) => notes.push(n) });
  assert.equal(c.actor.lr, 2e-6);
  assert.equal(c.rollout.n, 4);
  assert.equal(c.rollout.max_prompt_length, 900);
  assert.equal(c.rollout.max_response_length, 3000);
  assert.equal(c.rollout.max_tokens_per_turn, 200);
  assert.deepEqual(c.algorithm.rounds_ctrl.rounds, [20]);
  assert.equal(c.trainer.total_steps, 7);
  assert.deepEqual([c.actor.clip_ratio_low, c.actor.clip_ratio_high], [0.3, 0.3]);
  assert.ok(notes.some((n) => /gpu_memory_utilization .*ignores it/.test(n)));
  assert.ok(notes.includes("actor_rollout_ref.actor.optim.lr is actor.lr"));
});

Deno.test("LoRA under verl's names; rank 0 with another LoRA key set is refused naming the key and the limit", () => {
  const c = resolveConfig(src(""), [
    "actor_rollout_ref.model.lora_rank=16",
    "actor_rollout_ref.model.lora_alpha=32",
    "actor_rollout_ref.model.target_modules=all-linear",
    "actor_rollout_ref.model.lora_adapter_path=some/adapter",
  ]);
  assert.deepEqual(
    [c.model.lora_rank, c.model.lora_alpha, c.model.target_modules, c.model.adapter],
    [16, 32, "all-linear", "some/adapter"],
  );
  const plain = resolveConfig(src(""));
  assert.deepEqual([plain.model.lora_rank, plain.model.lora_alpha, plain.model.target_modules], [0, null, null]);
  for (const key of ["lora_alpha=8", "target_modules=[q_proj]", "save_merged=true", "base_dtype=f16"]) {
    assert.throws(
      () => resolveConfig(src(""), [`model.${key}`]),
      new RegExp(`"model\\.${key.split("=")[0]}": is a LoRA setting, but model\\.lora_rank is 0 .*at least 1`),
    );
  }
  assert.throws(() => resolveConfig(src(""), ["model.lora_rank=-2"]), /"model\.lora_rank"/);
});

Deno.test("deno task config prints the resolved config with the task's options filled", async () => {
  const r = await runCli(["config", "textcraft", "actor_rollout_ref.actor.optim.lr=3e-6"]);
  assert.equal(r.code, 0);
  const c = parse(r.out) as Record<string, Record<string, unknown>>;
  assert.equal(c.actor.lr, 3e-6);
  assert.equal(typeof c.task_options.oracle_format, "string");
  assert.match(r.err, /note: actor_rollout_ref\.actor\.optim\.lr is actor\.lr/);
});
