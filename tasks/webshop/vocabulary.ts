/**
 * Everything the WebShop task shows and says as text, for the built-in tiny model's word-level vocabulary: the
 * prompt, every page the generated catalogue can show (start pages with each goal's instruction, results, item pages
 * with their options, sub-pages, the done page) and the oracle's replies in both forms. No phrases: asins are letter
 * runs (one token each after "B0"), option values and names are common words.
 */
import type { Prompt, TaskVocabulary } from "../../src/task/task.ts";
import { oracleEpisode } from "./oracle.ts";
import { donePage, itemPage, observationOf, resultsPage, searchPage, SUB_PAGES, subPage } from "./pages.ts";
import type { WebShopWorld } from "./world.ts";

/** The vocabulary over `world`'s pages and goals. */
export function webShopVocabulary(world: WebShopWorld, prompt: Prompt): TaskVocabulary {
  const corpus = [prompt.user, prompt.assistant];
  const products = world.catalog.products;
  for (let i = 0; i < products.length; i += 10) {
    corpus.push(observationOf(resultsPage("", products.slice(i, i + 10), 2, products.length)));
  }
  for (const p of products) {
    corpus.push(observationOf(itemPage("", p)));
    for (const sub of SUB_PAGES) corpus.push(observationOf(subPage("", p, sub)));
  }
  corpus.push(observationOf(donePage(products[0]?.asin ?? "", new Map([["color", "black"]]), 0.75)));
  world.goals.forEach((g, i) => {
    corpus.push(observationOf(searchPage(g.instructionText)));
    for (const format of ["react", "action"] as const) corpus.push(...oracleEpisode(world, i, format).replies);
  });
  return { corpus, phrases: [] };
}
