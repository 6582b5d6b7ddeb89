// A checkpoint evaluates the same anywhere: `deno task eval` on a run's final checkpoint plays the same episodes
// and reports the same numbers as the run's own final evaluation, because the checkpoint carries its prompt and
// limits (crucible.json), here deliberately unlike the task's defaults.
import assert from "node:assert/strict";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";

const TINY = "hidden_size: 32\nintermediate_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 2\n" +
  "num_key_value_heads: 1\nrope_theta: 10000\nrms_norm_eps: 1.0e-6\ntie_word_embeddings: true\n" +
  "max_position_embeddings: 2048\ninit_std: 0.05\nseed: 5\n";

Deno.test({
  name: "deno task eval on a run's final checkpoint gives the run's own final episodes and numbers",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, TINY);
    const train = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/run`,
      `model.tiny=${dir}/tiny.yaml`,
      "model.path=null",
      'data.prompt={user: "Make the goal, one action per reply.", assistant: "Sure."}',
      "sft.enabled=false",
      "data.train_batch_size=2",
      "rollout.n=2",
      "rollout.max_tokens_per_turn=7",
      "rollout.max_response_length=80",
      "algorithm.rounds_ctrl.type=fixed",
      "algorithm.rounds_ctrl.rounds=[2]",
      "trainer.total_steps=1",
      "trainer.test_freq=0",
      "trainer.eval_limit=4",
    ]);
    assert.equal(train.code, 0, train.err);
    const final = `${dir}/run/checkpoints/final`;
    const agent = JSON.parse(await Deno.readTextFile(`${final}/crucible.json`));
    assert.equal(agent.prompt.user, "Make the goal, one action per reply.");
    assert.equal(agent.max_tokens_per_turn, 7);
    const ev = await runCli([
      "eval",
      "--model",
      final,
      "--limit",
      "4",
      "--json",
      "--episodes",
      `${dir}/episodes.jsonl`,
    ]);
    assert.equal(ev.code, 0, ev.err);
    const got = JSON.parse(ev.out.trim().split("\n").pop()!);
    const lines = (f: string) => Deno.readTextFileSync(f).trim().split("\n").map((l) => JSON.parse(l));
    const own = lines(`${dir}/run/evals.jsonl`).find((e) => e.phase === "final");
    for (const key of ["avg", "pass", "meanReward", "episodes", "perTask", "byCategory"]) {
      assert.deepEqual(got[key], own[key], key);
    }
    const played = lines(`${dir}/episodes.jsonl`).map((e) => [e.task, e.turns, e.finish]);
    const recorded = lines(`${dir}/run/rollouts.jsonl`).filter((e) => e.phase === "eval-final")
      .map((e) => [e.task, e.turns, e.finish]);
    assert.ok(recorded.length === 4 && recorded.every((r) => (r[1] as unknown[]).length > 0));
    assert.deepEqual(played, recorded, "the same episodes, turn for turn");
  },
});
