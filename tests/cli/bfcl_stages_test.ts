// EnvTuning's three stages as a user runs them (subprocesses): a toy model trains on configs/bfcl_stage1.yaml, then
// stage 2 and stage 3 each start from the previous stage's final checkpoint (--model), which is checked bit for bit
// against the next run's reference model; each stage runs its own reward (format, format, progress).
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { SMOKE_MODEL_YAML } from "../../bench/smoke_run.ts";
import { runCli, sha } from "../subprocess.ts";

const BUDGET = [
  "data.train_batch_size=2",
  "rollout.n=2",
  "rollout.max_tokens_per_turn=8",
  "rollout.max_response_length=96",
  "rollout.max_prompt_length=3000",
  "algorithm.rounds_ctrl.type=fixed",
  "algorithm.rounds_ctrl.rounds=[3]",
  "actor.ppo_mini_batch_size=1",
  "trainer.save_freq=1",
  "trainer.eval_limit=2",
  "trainer.total_steps=1",
  "trainer.test_freq=1",
];

async function train(args: string[]): Promise<void> {
  const r = await runCli(["train", ...args, ...BUDGET]);
  assert.equal(r.code, 0, r.err + r.out);
}

Deno.test({
  name: "a toy model passes through EnvTuning's three stages, each resuming from the last",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML.replace("2048", "4096"));
    try {
      let previous: string | undefined;
      for (const [stage, rewards] of [[1, "format"], [2, "format"], [3, "progress"]] as const) {
        const run = `${dir}/stage${stage}`;
        const model = previous ? [`model.path=${previous}`] : [`model.tiny=${dir}/tiny.yaml`, "model.path=null"];
        await train([`bfcl_stage${stage}`, "--run-dir", run, ...model]);
        assert.match(await Deno.readTextFile(`${run}/config.yaml`), new RegExp(`rewards: ${rewards}`));
        const rl = (await Deno.readTextFile(`${run}/metrics.jsonl`)).trim().split("\n").map((l) => JSON.parse(l))
          .filter((m) => m.phase === "rl");
        assert.deepEqual(rl.map((m) => m.step), [1]);
        if (previous) {
          assert.equal(
            await sha(`${run}/checkpoints/rl-reference/model.safetensors`),
            await sha(`${previous}/model.safetensors`),
            `stage ${stage} starts from stage ${stage - 1}'s final weights`,
          );
        }
        previous = `${run}/checkpoints/final`;
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
