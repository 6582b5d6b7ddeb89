// WebShop's SFT augmentation (task_options.rename_asins): an episode's asins renamed consistently on every page and in
// every reply, to distinct asins of the generated pool, replayed from the seed, and nothing drawn at 0.
import assert from "node:assert/strict";
import { episodeAsins, renameAsins, webShopAugment } from "../../../tasks/webshop/augment.ts";
import { generatedSource } from "../../../tasks/webshop/data.ts";
import { ASIN_POOL } from "../../../tasks/webshop/generated/generate.ts";
import { playedEpisode } from "../../../tasks/webshop/synthetic.ts";
import { Rng } from "../../../src/util/random.ts";

const { world, tasks } = generatedSource();
const episode = playedEpisode(world, tasks.splits!.train[0], { format: "action" });
const context = (seed: number) => ({ rng: new Rng(seed), epoch: 0, epochs: 1 });

Deno.test("renamed asins: the same new name on every page and in the reply that clicks it, all distinct, from the pool", () => {
  const before = episodeAsins(episode);
  assert.ok(before.length >= 10, "a results page shows ten asins");
  const renamed = webShopAugment(1)!(episode, context(5));
  const after = episodeAsins(renamed);
  assert.equal(after.length, before.length);
  assert.equal(new Set(after).size, after.length);
  for (const a of after) assert.ok(ASIN_POOL.includes(a));
  // The asin the reply clicks stands where the clicked one stood on the results page.
  const page = (e: typeof episode) => e.turns[0].observation.match(/\bB0[0-9A-Z]{8}\b/g)!;
  const clicked = (e: typeof episode) => e.turns[1].reply.match(/click\[(B0[0-9A-Z]{8})\]/)![1];
  assert.equal(page(renamed).indexOf(clicked(renamed)), page(episode).indexOf(clicked(episode)));
  assert.ok(page(renamed).indexOf(clicked(renamed)) >= 0);
  // Only asins change: the text between them is the same.
  const strip = (e: typeof episode) => JSON.stringify(e).replace(/\bB0[0-9A-Z]{8}\b/g, "ASIN");
  assert.equal(strip(renamed), strip(episode));
  assert.notDeepEqual(renamed, episode);
});

Deno.test("rename_asins replays from the seed, draws nothing at 0, and renames about its share", () => {
  assert.equal(webShopAugment(0), undefined);
  const half = webShopAugment(0.5)!;
  assert.deepEqual(half(episode, context(9)), half(episode, context(9)));
  let renamed = 0;
  for (let s = 0; s < 200; s++) if (half(episode, context(s)) !== episode) renamed++;
  assert.ok(renamed > 70 && renamed < 130, `renamed ${renamed} of 200 at 0.5`);
  const names = new Map([[episodeAsins(episode)[0], "B0AAAAAAAA"]]);
  assert.ok(JSON.stringify(renameAsins(episode, names)).includes("B0AAAAAAAA"));
});
