// The WebShop task's hooks: a reply read as AgentGym's WebShop client reads it, task options checked with the key,
// the generated splits, categories and labels by goal, the oracle and the tiny model's vocabulary covering its pages.
import assert from "node:assert/strict";
import { getTask } from "../../../tasks/mod.ts";
import { generatedSource } from "../../../tasks/webshop/data.ts";
import { webshop, WEBSHOP_PROMPT, webShopAction } from "../../../tasks/webshop/mod.ts";

Deno.test("a reply's action as AgentGym's parse_react reads it", () => {
  assert.equal(webShopAction("Thought:\nI search.\n\nAction:\nsearch[red shoes]"), "search[red shoes]");
  assert.equal(webShopAction("Action: click[a]\nAction: click[b]"), "click[b]"); // the last Action:
  assert.equal(webShopAction("I will search[red shoes] now"), "I will search[red shoes] now");
  assert.equal(webShopAction("no action here"), "");
  assert.equal(webShopAction("Action:\nclick[buy now]</s>"), "click[buy now"); // upstream cuts five: "]</s>"
  assert.deepEqual(webshop.parseAction("Action: click[Buy Now]"), { action: "click[Buy Now]" });
  assert.equal(getTask("webshop"), webshop);
});

Deno.test("task options: defaults, and an unknown key or value named", () => {
  assert.deepEqual(webshop.parseOptions!({}), { data_dir: null, goals: "auto", reply_format: "react" });
  assert.throws(() => webshop.parseOptions!({ datadir: "x" }), /Unknown WebShop option "task_options.datadir"/);
  assert.throws(() => webshop.parseOptions!({ goals: "robot" }), /task_options.goals/);
});

Deno.test("splits, categories and labels follow the generated goals", () => {
  const { world, tasks } = generatedSource();
  assert.deepEqual(webshop.splits, tasks.splits);
  const i = tasks.splits!.test[0];
  assert.equal(webshop.category!(i), world.goals[i].category);
  assert.equal(webshop.category!(i, { category: "fashion" }), "fashion");
  assert.equal(webshop.label!(i), world.goals[i].asin);
});

Deno.test("the oracle's replies and the vocabulary: every word of a page and of a reply is in the corpus", async () => {
  const replies = await webshop.oracle!(0, { reply_format: "action" });
  assert.match(replies[0], /^Action:\nsearch\[/);
  assert.equal(replies.at(-1), "Action:\nclick[Buy Now]");
  const vocab = await webshop.vocabulary!(WEBSHOP_PROMPT);
  const words = new Set(vocab.corpus.join(" ").match(/\p{L}+/gu));
  for (const text of [...replies, generatedSource().world.goals[0].instructionText]) {
    for (const w of text.match(/\p{L}+/gu) ?? []) assert.ok(words.has(w), w);
  }
});
