// WebShop's synthetic tasks for pretraining: fresh catalogues whose asins name other products in every world, every
// word of their pages and replies in the tiny model's vocabulary (no [UNK]), and held-out task i served as the goal i
// that heldOut(seed, i) plays, which the oracle solves through the server.
import assert from "node:assert/strict";
import { envClient } from "../../../tasks/mod.ts";
import { UNK, wordTokenizer } from "../../../src/model/word_tokenizer.ts";
import { Rng } from "../../../src/util/random.ts";
import { webshop } from "../../../tasks/webshop/mod.ts";
import { WEBSHOP_PROMPT } from "../../../tasks/webshop/prompt.ts";
import { webShopSynthetic, worldOf } from "../../../tasks/webshop/synthetic.ts";

Deno.test("fresh worlds: the same asin names different products, goals differ", () => {
  const a = worldOf(1), b = worldOf(2);
  const shared = a.catalog.products.map((p) => p.asin).filter((x) => b.catalog.byAsin.has(x));
  assert.ok(shared.length > 10, `${shared.length} asins in both`);
  const renamed = shared.filter((x) => a.catalog.byAsin.get(x)!.title !== b.catalog.byAsin.get(x)!.title);
  assert.ok(renamed.length > shared.length * 0.8);
  assert.notEqual(a.goals[0].instructionText, b.goals[0].instructionText);
});

Deno.test("every word of synthetic episodes is in the tiny model's vocabulary", async () => {
  const vocab = await webshop.vocabulary!(WEBSHOP_PROMPT);
  const tok = wordTokenizer(vocab.corpus);
  const unk = tok.id(UNK);
  const synthetic = webShopSynthetic({ format: "react" });
  const rng = new Rng(3);
  for (let i = 0; i < 20; i++) {
    const e = synthetic.episode(rng, 1);
    for (const text of [e.opening, ...e.turns.flatMap((t) => [t.reply, t.observation])]) {
      const ids = tok.encode(text);
      assert.ok(!ids.includes(unk), `an unknown word in: ${text.slice(0, 200)}`);
    }
  }
});

Deno.test("held-out task i is served as heldOut(seed, i)'s goal, and the oracle solves it through the server", async () => {
  const synthetic = webShopSynthetic({ format: "action" });
  const server = await synthetic.serve(99);
  const client = envClient("webshop", { urls: [server.url], retries: 0 });
  try {
    for (const i of [0, 5, 17]) {
      const e = synthetic.heldOut(99, i);
      const env = await client.create({ parseAction: webshop.parseAction });
      assert.equal(await env.reset(i), e.opening);
      let last = { reward: 0, observation: "" };
      for (const t of e.turns) {
        last = await env.step(t.reply);
        assert.equal(last.observation, t.observation);
      }
      assert.equal(last.reward, 1);
      await env.close();
    }
  } finally {
    client.close();
    await server.shutdown();
  }
});
