import assert from "node:assert/strict";
import { textcraftAdapter } from "../../../src/env/adapters/textcraft.ts";
import { EnvClient } from "../../../src/env/client.ts";
import { wordTokenizer } from "../../../src/model/word_tokenizer.ts";
import { textCraftCorpus } from "../../../tasks/textcraft/vocabulary.ts";
import { solveGoal, solveTask } from "../../../tasks/textcraft/oracle.ts";
import { textcraft } from "../../../tasks/textcraft/mod.ts";
import { playScripts, tree, withTextCraft } from "../../env/helpers.ts";
import { end, firstLine, spawnCli } from "../../subprocess.ts";

Deno.test("the oracle's plans are shortest on hand-checked goals", () => {
  // One stick: two bamboo beat a log and its planks (2 actions against 3).
  assert.deepEqual(solveGoal(tree, "minecraft:stick").actions, ["get 2 bamboo", "craft 1 stick using 2 bamboo"]);
  // Eight sticks: one log, four planks, two crafts of 4 sticks (4 actions) beat eight bamboo crafts and a get (9).
  const painting = solveGoal(tree, "minecraft:painting").actions;
  assert.equal(painting.filter((a) => a.startsWith("craft 4 stick using 2 ")).length, 2);
  assert.equal(painting.length, 9);
  assert.deepEqual(solveGoal(tree, "minecraft:gold_ingot").actions, [
    "get 9 gold nugget",
    "craft 1 gold ingot using 9 gold nugget",
  ]);
  assert.throws(() => solveGoal(tree, "minecraft:dirt"), RangeError);
});

Deno.test("every one of the 544 tasks is solved by the oracle through the HTTP server, reward only at the end", async () => {
  await withTextCraft(async ({ url }) => {
    const client = new EnvClient(textcraftAdapter, { urls: [url], retries: 0 });
    const tok = wordTokenizer(textCraftCorpus(tree, ["Thought:\nfollow the plan.\n\nAction:\n"]));
    const started = performance.now();
    const plans = tree.goals.map((_, i) => solveTask(tree, i).actions);
    const episodes = plans.map((plan, index) => ({
      index,
      replies: plan.map((a) => `Thought:\nfollow the plan.\n\nAction:\n${a}`),
    }));
    const results = await playScripts(client, textcraft, tok, episodes);
    results.forEach((result, i) => {
      assert.equal(result.finish, "done", `task ${i}: ${JSON.stringify(result.turns.at(-1))}`);
      assert.equal(result.reward, 1);
      assert.equal(result.turns.length, plans[i].length, `task ${i} ended early`);
      assert.deepEqual(result.turns.map((t) => t.action), plans[i]);
      assert.ok(result.turns.slice(0, -1).every((t) => t.reward === 0));
      assert.ok(result.turns.every((t) => !/^(Could not|Wrong)/.test(t.observation)), `task ${i}`);
    });
    client.close();
    const actions = plans.reduce((n, p) => n + p.length, 0);
    console.log(`544 oracle episodes, ${actions} actions, ${Math.round(performance.now() - started)} ms`);
  });
});

Deno.test("the same index gives the same text in two separate server processes", async () => {
  const start = async () => {
    const p = spawnCli(["serve", "textcraft", "--port", "0"]);
    return { p, url: /listening on (\S+)/.exec(await firstLine(p, "out"))![1] };
  };
  const servers = await Promise.all([start(), start()]);
  try {
    const texts = await Promise.all(servers.map(async ({ url }) => {
      const headers = { "content-type": "application/json" };
      const { id } = await (await fetch(`${url}/create`, { method: "POST", headers, body: "{}" })).json();
      const out: string[] = [];
      for (const data_idx of [0, 77, 160, 300, 450, 520, 540]) {
        const res = await fetch(`${url}/reset`, { method: "POST", headers, body: JSON.stringify({ id, data_idx }) });
        out.push((await res.json()).observation);
      }
      return out;
    }));
    assert.deepEqual(texts[0], texts[1]);
    assert.equal(new Set(texts[0]).size, 7);
  } finally {
    for (const { p } of servers) await end(p);
  }
});
