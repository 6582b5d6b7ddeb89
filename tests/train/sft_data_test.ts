import assert from "node:assert/strict";
import { envClient } from "../../src/env/adapters/mod.ts";
import { solveTask } from "../../src/env/textcraft/oracle.ts";
import { textCraftCorpus } from "../../src/env/textcraft/corpus.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { agentGymSequences, oracleReply, oracleSequences } from "../../src/train/sft_data.ts";
import { textcraft } from "../../tasks/textcraft.ts";
import { tree, withTextCraft } from "../env/helpers.ts";

const tok = wordTokenizer(textCraftCorpus(tree, [textcraft.prompt.user, textcraft.prompt.assistant, "Action: x"]));
const stop = tok.id("<|im_end|>");

Deno.test("oracle sequences train exactly on the oracle's replies and their stop tokens", async () => {
  await withTextCraft(async (server) => {
    const client = envClient("textcraft", { urls: [server.url] });
    const tasks = [2, 200, 430];
    const seqs = await oracleSequences({ tokenizer: tok, client, task: textcraft, stopId: stop }, tasks, {
      format: "action",
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
    /f entry 0/,
  );
  assert.throws(() => agentGymSequences("{oops", tok, stop, "g.jsonl"), SyntaxError);
});
