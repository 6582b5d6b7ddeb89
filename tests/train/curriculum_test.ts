// A curriculum (src/train/curriculum.ts) on BFCL's generated tasks with a smoke-sized tiny model: three stages in one
// call, the first two promoted by a threshold every step passes (after their windows of 1 and 2 RL steps), the last
// running its total_steps to a final evaluation; each stage starts from the previous one's checkpoint; promotions are
// lines and records in metrics.jsonl; and a curriculum stopped in its second stage resumes there (the first is not run
// again) and ends as the uninterrupted one did. The file checks (bad keys, the shipped bfcl) need no GPU.
import assert from "node:assert/strict";
import { configSource } from "../../src/config/presets.ts";
import { curriculumConfigs, isCurriculum, parseCurriculum, runCurriculum } from "../../src/train/curriculum.ts";
import { SMOKE_MODEL_YAML } from "../../bench/smoke_run.ts";
import { noGpu } from "../no_gpu.ts";
import type { Reporter } from "../../src/train/types.ts";

function reporter(lines: string[]): Reporter {
  return { bar: () => ({ tick() {}, done() {} }), line: (t) => lines.push(t) };
}

const BASE = (dir: string) =>
  [
    "task: bfcl",
    `model: { tiny: ${dir}/tiny.yaml }`,
    "task_options: { call_format: tiny, rewards: progress }",
    "data: { train_batch_size: 2 }",
    "rollout: { n: 2, max_tokens_per_turn: 8, max_prompt_length: 2800, max_response_length: 64 }",
    "algorithm: { adv_estimator: grpo, rounds_ctrl: { type: fixed, rounds: [2] } }",
    "actor: { ppo_mini_batch_size: 2, lr: 0.01 }",
    "sft: { enabled: false }",
    "trainer: { save_freq: 1, test_freq: 0, eval_limit: 2, eval_temperature: 0 }",
  ].join("\n") + "\n";

const CURRICULUM = (dir: string) =>
  [
    "curriculum:",
    `  base: ${dir}/base.yaml`,
    "  stages:",
    "    - name: format",
    "      config: { task_options: { rewards: format }, trainer: { total_steps: 3 } }",
    "      promote: { metric: reward_mean, above: -1, window: 1 }",
    "    - name: progress",
    "      config: { trainer: { total_steps: 3 } }",
    "      promote: { metric: reward_mean, above: -1, window: 2 }",
    "    - name: final",
    "      config: { task_options: { feedback: false }, trainer: { total_steps: 1 } }",
  ].join("\n") + "\n";

async function files(dir: string) {
  // BFCL's first observation lists the tools: the smoke model with room for a 2,800-token prompt.
  await Deno.writeTextFile(
    `${dir}/tiny.yaml`,
    SMOKE_MODEL_YAML.replace("max_position_embeddings: 2048", "max_position_embeddings: 4096"),
  );
  await Deno.writeTextFile(`${dir}/base.yaml`, BASE(dir));
  return { text: CURRICULUM(dir), name: `${dir}/curriculum.yaml` };
}

const jsonl = (path: string) =>
  Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

Deno.test({
  name: "three stages in one call: threshold promotions, chained checkpoints, logged; a stopped one resumes its stage",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "curriculum_" });
    try {
      const source = await files(dir);
      const lines: string[] = [];
      const a = await runCurriculum({
        source,
        overrides: [],
        dir: `${dir}/straight`,
        resume: false,
        reporter: reporter(lines),
        stopRequested: () => false,
      });
      assert.equal(a.interrupted, false);
      assert.deepEqual(a.stages.map((s) => [s.name, s.status, s.step]), [
        ["format", "promoted", 1],
        ["progress", "promoted", 2],
        ["final", "completed", 1],
      ]);
      assert.ok(a.finalEval, "the last stage ran its final evaluation");
      assert.match(a.stages[2].checkpoint!, /checkpoints\/final$/);
      // Each later stage starts from the previous stage's checkpoint, with no SFT.
      for (const i of [1, 2]) {
        const cfg = Deno.readTextFileSync(`${a.stages[i].dir}/config.yaml`);
        assert.ok(cfg.includes(a.stages[i - 1].checkpoint!), cfg);
      }
      assert.match(Deno.readTextFileSync(`${a.stages[0].dir}/config.yaml`), /rewards: format/);
      assert.match(Deno.readTextFileSync(`${a.stages[2].dir}/config.yaml`), /feedback: false/);
      const events = jsonl(`${dir}/straight/metrics.jsonl`);
      assert.deepEqual(events.map((e) => [e.event, e.stage]), [
        ["stage_start", 1],
        ["promotion", 1],
        ["stage_start", 2],
        ["promotion", 2],
        ["stage_start", 3],
        ["stage_end", 3],
      ]);
      assert.deepEqual([events[1].status, events[1].metric, events[1].to], ["promoted", "reward_mean", "progress"]);
      assert.deepEqual([events[5].status, events[5].to], ["completed", null]);
      assert.equal(events[3].window, 2);
      assert.ok(
        lines.some((l) => /stage 1 format -> stage 2 progress at RL step 1: reward_mean over the last 1/.test(l)),
      );

      // Stopped by a signal during stage 2, then resumed: stage 1 is not run again and the ends match.
      const run = `${dir}/stopped`;
      const stage2 = `${run}/stage2-progress/metrics.jsonl`;
      const b = await runCurriculum({
        source,
        overrides: [],
        dir: run,
        resume: false,
        reporter: reporter([]),
        stopRequested: () => {
          try {
            return Deno.readTextFileSync(stage2).includes('"phase":"rl"');
          } catch {
            return false;
          }
        },
      });
      assert.equal(b.interrupted, true);
      assert.deepEqual(b.stages.map((s) => s.status), ["promoted", "running"]);
      const stage1Log = Deno.readTextFileSync(`${run}/stage1-format/metrics.jsonl`);
      const resumed: string[] = [];
      const r = await runCurriculum({
        source: { text: Deno.readTextFileSync(`${run}/curriculum.yaml`), name: `${run}/curriculum.yaml` },
        overrides: [],
        dir: run,
        resume: true,
        reporter: reporter(resumed),
        stopRequested: () => false,
      });
      assert.equal(r.interrupted, false);
      assert.ok(resumed[0].startsWith("Curriculum: resuming stage 2/3 progress"), resumed[0]);
      assert.equal(Deno.readTextFileSync(`${run}/stage1-format/metrics.jsonl`), stage1Log);
      assert.deepEqual(r.stages.map((s) => [s.status, s.step]), a.stages.map((s) => [s.status, s.step]));
      const steps = jsonl(stage2).filter((m) => m.phase === "rl").map((m) => m.step);
      assert.deepEqual(steps, [1, 2], "stage 2 went on from its step 1 checkpoint");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("curriculum files: the shipped bfcl checks, and bad keys name the file and the key", async () => {
  const shipped = await configSource("bfcl");
  assert.ok(isCurriculum(shipped));
  const { spec, stageConfig } = await curriculumConfigs(shipped, []);
  assert.deepEqual(spec.stages.map((s) => s.name), ["format", "progress", "final"]);
  const configs = [stageConfig(0, undefined), stageConfig(1, "/ckpt/a"), stageConfig(2, "/ckpt/b")];
  assert.deepEqual(configs.map((c) => c.task_options.rewards), ["format", "progress", "progress"]);
  assert.deepEqual(configs.map((c) => c.task_options.feedback), [true, true, false]);
  assert.deepEqual(configs.map((c) => c.sft.enabled), [true, false, false]);
  assert.deepEqual(configs.map((c) => c.model.path), ["models/bfcl-base", "/ckpt/a", "/ckpt/b"]);
  assert.ok(configs.reduce((n, c) => n + c.trainer.total_steps, 0) <= 20);
  assert.equal(isCurriculum(await configSource("bfcl_single")), false);

  const bad = (text: string) => ({ text, name: "bad.yaml" });
  assert.throws(
    () =>
      parseCurriculum(
        bad("curriculum:\n  base: bfcl_single\n  stages:\n    - name: a\n      promote: { above: 1, windw: 2 }\n"),
      ),
    /bad\.yaml: curriculum key "curriculum\.stages\.0\.promote".*windw/,
  );
  assert.throws(() => parseCurriculum(bad("curriculum:\n  base: bfcl_single\n  stages: []\n")), /curriculum\.stages/);
  await assert.rejects(
    () =>
      curriculumConfigs(
        bad("curriculum:\n  base: bfcl_single\n  stages:\n    - name: a\n      config: { actor: { lrr: 1 } }\n"),
        [],
      ),
    /bad\.yaml stage 1 \(a\).*"actor\.lrr"/,
  );
  await assert.rejects(
    () => curriculumConfigs(bad("curriculum:\n  base: bfcl\n  stages:\n    - name: a\n"), []),
    /bad\.yaml: curriculum\.base "bfcl" is itself a curriculum; name a run config/,
  );
});
