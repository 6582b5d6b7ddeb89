// An episode's pass is BFCL's (every turn passed the checker), whatever reward the episode is trained on: under
// EnvTuning's stage 1-2 format reward (0..2) the server's final `info.passed` decides it, so the oracle's
// demonstrations (SFT before stage 1 of `deno task train bfcl`) and success rates count passes, not rewards of 1.
import assert from "node:assert/strict";
import { buildTinyModel } from "../../../src/model/tiny.ts";
import { oracleEpisodes } from "../../../src/train/sft_data.ts";
import { runRollouts } from "../../../src/rollout/agent.ts";
import { ScriptedSampler } from "../../../src/rollout/scripted.ts";
import { envClient, TASKS } from "../../../tasks/mod.ts";

const bfcl = TASKS.bfcl;

Deno.test("a BFCL pass is the server's passed, under any reward; a server that says nothing: a reward of 1", () => {
  assert.equal(bfcl.isSuccess(2, { passed: true }), true);
  assert.equal(bfcl.isSuccess(1, { passed: false }), false);
  assert.equal(bfcl.isSuccess(1), true);
  assert.equal(bfcl.isSuccess(0.5), false);
});

Deno.test("under the format reward the oracle's episodes pass with rewards above 1, and a format reward of 1 without a pass fails", async () => {
  const options = {
    call_format: "tiny",
    rewards: "format",
    generated_classes: ["GorillaFileSystem", "MathAPI"],
    generated_categories: ["base"],
  };
  const vocabulary = await bfcl.vocabulary!(bfcl.prompt);
  const tok = buildTinyModel(vocabulary.corpus, undefined, vocabulary.phrases).tokenizer;
  const stopId = tok.id("<|im_end|>");
  const server = await bfcl.serve!(options);
  const client = envClient("bfcl", { urls: [server.url] });
  try {
    const tasks = [0, 1, 2];
    const limits = { maxPromptLength: 1_000_000, maxResponseLength: 1_000_000 };
    const played = await oracleEpisodes({ tokenizer: tok, client, task: bfcl, stopId }, tasks, { options, ...limits });
    assert.equal(played.length, tasks.length);
    for (const t of played) {
      assert.ok(t.success, `task ${t.task}`);
      assert.ok(t.reward !== null && t.reward > 1, `task ${t.task}: reward ${t.reward}, a format reward`);
    }
    // A call that raises (-2), then "Done." on every turn: a format reward of 1 (every reply well formed, one
    // call made of which none ran), which the old `reward === 1` read as a pass.
    const idle = new ScriptedSampler(tok, () => ["call: add a=1"], stopId, { fallback: "Done." });
    const failed = await runRollouts({ generator: idle, tokenizer: tok, client, task: bfcl }, [
      { task: 0, group: 0, seed: 0 },
    ], { maxRounds: bfcl.maxRounds, maxTokensPerTurn: 1 << 20, ...limits, sampling: {}, stopIds: [stopId] });
    assert.equal(failed[0].finish, "done");
    assert.match(failed[0].turns[0].observation, /^Error during execution: MathAPI\.add\(\) missing 1 required/);
    assert.equal(failed[0].reward, 1);
    assert.equal(failed[0].success, false);
  } finally {
    client.close();
    await server.shutdown();
  }
});
