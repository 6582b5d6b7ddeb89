// The play page's agent builds its conversation token for token as Crucible's episode loop does (same chat template,
// same prompt, same observation chunks), so the model plays in the page as it played in training; and after a
// person's move it re-reads the conversation and answers as a fresh sampler would.
import assert from "node:assert/strict";
import { envClient } from "../../tasks/mod.ts";
import { serveTextCraft } from "../../tasks/textcraft/game/server.ts";
import { stopTokenIds } from "../../src/model/model_dir.ts";
import { onnxBytes } from "../../src/onnx/export.ts";
import { createSession, loadOrt } from "../../src/onnx/runtime.ts";
import { OnnxSampler } from "../../src/onnx/sampler.ts";
import { PageAgent } from "../../src/play/agent.ts";
import { runRollouts } from "../../src/rollout/agent.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { testModels } from "../onnx/models.ts";

const PROMPT = { user: "Craft the goal. Reply with one action.", assistant: "OK." };
const m = testModels()[0];

async function sampler(): Promise<OnnxSampler> {
  const session = await createSession(await onnxBytes(m, "f32"));
  return new OnnxSampler(await loadOrt(), session, m.config, { slots: 1, maxLen: 4096 });
}

Deno.test("the page's agent holds the same token sequence as Crucible's episode loop, turn by turn", async () => {
  const server = await serveTextCraft({ port: 0 });
  const client = envClient("textcraft", { urls: [server.url] });
  try {
    const stopIds = stopTokenIds(m);
    const limits = { maxTokensPerTurn: 10, maxResponseLength: 4000, maxPromptLength: 4000 };
    const task = { ...textcraft, prompt: PROMPT };
    const ctx = { generator: await sampler(), tokenizer: m.tokenizer, client, task };
    const [t] = await runRollouts(ctx, [{ task: 7, group: 0, seed: 0 }], {
      ...limits,
      maxRounds: 3,
      sampling: { temperature: 0 },
      stopIds,
    });
    assert.equal(t.rounds, 3);

    const agent = new PageAgent(await sampler(), m.tokenizer, {
      prompt: PROMPT,
      maxTokensPerTurn: limits.maxTokensPerTurn,
      temperature: 0,
      stopIds,
    });
    const env = await client.create({ parseAction: textcraft.parseAction });
    agent.start(await env.reset(7));
    for (let round = 0; round < 3; round++) {
      const reply = await agent.reply();
      agent.record(reply.text, (await env.step(reply.text)).observation);
    }
    const episode = [...t.promptIds, ...t.responseIds];
    assert.deepEqual(agent.ids.slice(0, episode.length), episode);

    // A person's move: the agent's next reply is what a fresh sampler says to the whole conversation.
    agent.record("Action: get 1 oak log", (await env.step("Action: get 1 oak log")).observation);
    const fresh = await sampler();
    const [want] = await fresh.decode([fresh.open(agent.ids, 0)], [{ maxNewTokens: 10, stopIds }], { temperature: 0 });
    assert.deepEqual((await agent.reply()).ids, want.ids);
    await env.close();
  } finally {
    client.close();
    await server.shutdown();
  }
});
