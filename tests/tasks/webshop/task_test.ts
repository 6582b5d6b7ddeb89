// The WebShop task's hooks: a reply read as AgentGym's WebShop client reads it, task options checked with the key,
// the generated splits, categories and labels by goal, the oracle (the goal's own and the page-only one) and the tiny model's vocabulary covering its pages.
import assert from "node:assert/strict";
import { getTask } from "../../../tasks/mod.ts";
import { generatedSource } from "../../../tasks/webshop/data.ts";
import { oracleEpisode } from "../../../tasks/webshop/oracle.ts";
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
  assert.deepEqual(webshop.parseOptions!({}), {
    data_dir: null,
    goals: "auto",
    reply_format: "react",
    oracle_pick: "target",
    rename_asins: 0,
    oracle_search: "words",
    invalid_penalty: 0,
  });
  assert.throws(() => webshop.parseOptions!({ datadir: "x" }), /Unknown WebShop option "task_options.datadir"/);
  assert.throws(() => webshop.parseOptions!({ goals: "robot" }), /task_options.goals/);
});

Deno.test("the page-only oracle searches the whole instruction, opens the first result, and plans only what it solves", async () => {
  const { world, tasks } = generatedSource();
  const page = { reply_format: "action", oracle_pick: "top", oracle_search: "instruction" };
  const solved = (await Promise.all(tasks.splits!.test.map((i) => webshop.oracle!(i, page)))).filter((r) => r.length);
  assert.equal(solved.length, 99); // every held-out goal: the first result of the whole instruction earns reward 1
  const train = await Promise.all(tasks.splits!.train.map((i) => webshop.oracle!(i, page)));
  const unplanned = tasks.splits!.train.filter((_, k) => train[k].length === 0);
  assert.equal(unplanned.length, 4);
  // A goal it leaves out is one whose first result does not earn reward 1.
  const left = oracleEpisode(world, unplanned[0], { format: "action", pick: "top", search: "instruction" });
  assert.ok(left.reward < 1 && left.done);
  const i = tasks.splits!.test[0];
  const [search, open] = await webshop.oracle!(i, page);
  assert.equal(search, `Action:\nsearch[${world.goals[i].instructionText}]`);
  const first = world.find(world.goals[i].instructionText.toLowerCase().split(" "), () => 0, 1)[0];
  assert.equal(open, `Action:\nclick[${first.asin}]`);
  // The goal's own oracle (target) searches the product words and opens the goal's product wherever it is listed.
  const target = await webshop.oracle!(i, { reply_format: "action" });
  assert.equal(target[1], `Action:\nclick[${world.goals[i].asin}]`);
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
