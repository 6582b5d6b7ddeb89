import assert from "node:assert/strict";
import { envClient } from "../../tasks/mod.ts";
import { solveTask } from "../../tasks/textcraft/oracle.ts";
import { textCraftCorpus } from "../../tasks/textcraft/vocabulary.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { agentGymSequences, oracleSequences } from "../../src/train/sft_data.ts";
import { oracleReply } from "../../tasks/textcraft/formats.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { tree, withTextCraft } from "../env/helpers.ts";
import { parseTextCraftOptions } from "../../tasks/textcraft/options.ts";
import { faultProxy, flaky } from "../../bench/fault_proxy.ts";

const tok = wordTokenizer(textCraftCorpus(tree, [textcraft.prompt.user, textcraft.prompt.assistant, "Action: x"]));
const stop = tok.id("<|im_end|>");

Deno.test("oracle sequences train exactly on the oracle's replies and their stop tokens", async () => {
  await withTextCraft(async (server) => {
    const client = envClient("textcraft", { urls: [server.url] });
    const tasks = [2, 200, 430];
    const seqs = await oracleSequences({ tokenizer: tok, client, task: textcraft, stopId: stop }, tasks, {
      options: { oracle_format: "action" },
      maxPromptLength: 2000,
      maxResponseLength: 2000,
    });
    client.close();
    seqs.forEach((s, i) => {
      assert.equal(s.mask.length, s.ids.length - s.promptLength);
      const trained = s.mask.map((m, j) => (m ? s.ids[s.promptLength + j] : -1)).filter((x) => x >= 0);
      const want = solveTask(tree, tasks[i]).actions.flatMap((a) => [...tok.encode(oracleReply(a, "action")), stop]);
      assert.deepEqual(trained, want);
    });
  });
});

Deno.test("AgentGym trajectory files: gpt turns train unless loss is false, the opening is prompt", () => {
  const conv = {
    conversations: [
      { from: "human", value: "Craft things." },
      { from: "gpt", value: "OK." },
      { from: "human", value: "Goal: craft stick." },
      { from: "gpt", value: "Action: get 1 oak logs" },
      { from: "human", value: "Got 1 oak logs" },
      { from: "gpt", value: "Action: inventory", loss: false },
    ],
  };
  const [s] = agentGymSequences(JSON.stringify(conv) + "\n", tok, stop, "t.jsonl");
  const trained = s.mask.map((m, j) => (m ? s.ids[s.promptLength + j] : -1)).filter((x) => x >= 0);
  assert.deepEqual(trained, [...tok.encode("Action: get 1 oak logs"), stop]);
  assert.ok(tok.decode(s.ids).includes("<|im_start|>user\nGot 1 oak logs<|im_end|>"));
  assert.throws(
    () => agentGymSequences('[{"conversations": [{"from": "gpt", "value": "x"}]}]', tok, stop, "f"),
    /f entry 1/,
  );
  assert.throws(() => agentGymSequences("{oops", tok, stop, "g.jsonl"), SyntaxError);
});

Deno.test("augmented epochs keep each episode's layout, rename consistently, and replay from the seed", async () => {
  await withTextCraft(async (server) => {
    const client = envClient("textcraft", { urls: [server.url] });
    const { oracleEpisodes, augmentedEpochs, episodeSequence, textEpisode } = await import(
      "../../src/train/sft_data.ts"
    );
    const { textCraftAugment } = await import("../../tasks/textcraft/augment.ts");
    const { ChatRenderer } = await import("../../src/rollout/chat.ts");
    const played = await oracleEpisodes({ tokenizer: tok, client, task: textcraft, stopId: stop }, [2, 200], {
      options: { oracle_format: "action" },
      maxPromptLength: 2000,
      maxResponseLength: 2000,
    });
    client.close();
    const chat = new ChatRenderer(tok);
    const episodes = played.map(textEpisode);
    const plain = episodes.map((t) => episodeSequence(chat, textcraft.prompt, t, stop));
    played.forEach((t, i) =>
      assert.deepEqual(plain[i].ids, [...t.promptIds, ...t.responseIds], "re-rendering is exact")
    );
    const augment = await textCraftAugment(parseTextCraftOptions({ oracle_format: "action", rename_items: 1 }));
    const epochOf = augmentedEpochs(chat, textcraft.prompt, episodes, { stopId: stop, seed: 5, epochs: 2, augment });
    const a = epochOf(0), b = epochOf(0), c = epochOf(1);
    assert.deepEqual(a, b, "same seed and epoch, same data");
    assert.notDeepEqual(a[0].ids, plain[0].ids, "items renamed");
    assert.notDeepEqual(a[0].ids, c[0].ids, "a fresh permutation each epoch");
    a.forEach((s) => {
      // The replies still read as actions on items of the renamed command list.
      const replies = tok.decode(s.ids.filter((_, k) => k >= s.promptLength && s.mask[k - s.promptLength] === 1));
      assert.match(replies, /^Action: (get|craft) /);
      const firstItem = /^Action: get \d+ ([a-z ]+?)<\|im_end\|>/.exec(replies)?.[1];
      if (firstItem) assert.ok(tok.decode(s.ids.slice(0, s.promptLength)).includes(firstItem), firstItem);
    });
  });
});

Deno.test("chat messages (TRL, OpenAI) read as AgentGym conversations; a system message opens the first user turn", () => {
  const messages = {
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Craft things." },
      { role: "assistant", content: "OK." },
      { role: "user", content: "Goal: craft stick." },
      { role: "assistant", content: "Action: get 1 oak logs" },
    ],
  };
  const [m] = agentGymSequences(JSON.stringify(messages), tok, stop, "m.jsonl");
  const conv = {
    conversations: [
      { from: "human", value: "Be brief.\n\nCraft things." },
      { from: "gpt", value: "OK." },
      { from: "human", value: "Goal: craft stick." },
      { from: "gpt", value: "Action: get 1 oak logs" },
    ],
  };
  const [c] = agentGymSequences(JSON.stringify(conv), tok, stop, "c.jsonl");
  assert.deepEqual(m, c);
});

Deno.test("bad SFT files: empty, a broken JSONL line (named), an entry of neither form", () => {
  assert.throws(() => agentGymSequences("  \n", tok, stop, "e.jsonl"), /e\.jsonl is empty/);
  assert.throws(() => agentGymSequences("[]", tok, stop, "a.json"), /holds no conversation/);
  const good = JSON.stringify({
    conversations: [{ from: "human", value: "a" }, { from: "gpt", value: "b" }, { from: "human", value: "c" }],
  });
  assert.throws(() => agentGymSequences(`${good}\n\n{"conversations": [`, tok, stop, "b.jsonl"), /b\.jsonl line 3/);
  assert.throws(() => agentGymSequences(`{"turns": []}`, tok, stop, "n.jsonl"), /entry 1: needs "conversations"/);
});

Deno.test("oracle demonstrations survive a server answering 20% of its requests with HTTP 500 (issue 32)", async () => {
  await withTextCraft(async (server) => {
    const proxy = faultProxy(server.url, flaky("500", 0.2, [], 7));
    const bare = envClient("textcraft", { urls: [proxy.url], retries: 0 });
    const client = envClient("textcraft", { urls: [proxy.url], retries: 1, backoffMs: 1 });
    const tasks = [2, 200, 430, 5, 77, 120];
    const settings = { options: { oracle_format: "action" }, maxPromptLength: 2000, maxResponseLength: 2000 };
    const ctx = { tokenizer: tok, client, task: textcraft, stopId: stop };
    try {
      // With no retry a 500 fails its episode (task 430 takes ~30 requests): that stops, naming the environment,
      // not a wrong demonstration. With one retry per request and replays of failed episodes, every episode plays.
      await assert.rejects(
        oracleSequences({ ...ctx, client: bare }, tasks, settings),
        /environment failed .* demonstration episodes/,
      );
      const seqs = await oracleSequences(ctx, tasks, { ...settings, retries: 50 });
      assert.equal(seqs.length, tasks.length);
      assert.ok(proxy.counts["500"] > 0);
    } finally {
      client.close();
      bare.close();
      await proxy.shutdown();
    }
  });
});
