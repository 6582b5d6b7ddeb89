/**
 * Everything the WebShop task shows and says as text, for the built-in tiny model's word-level vocabulary: the
 * prompt, every page the shipped catalogue can show (start pages with each goal's instruction, results, item pages
 * with their options, sub-pages, the done page), the oracle's replies in both forms, and every word any generated
 * catalogue can use (each kind's attributes and options, brands, title words, the whole asin pool), so that the
 * synthetic catalogues of pretraining (synthetic.ts) never meet an unknown word. No phrases: an asin is "B", "0" and
 * one letter run; option values and names are common words.
 */
import type { Prompt, TaskVocabulary } from "../../src/task/task.ts";
import { ASIN_POOL } from "./generated/generate.ts";
import { BRANDS, KINDS, TITLE_WORDS } from "./generated/kinds.ts";
import { oracleEpisode } from "./oracle.ts";
import { donePage, itemPage, observationOf, resultsPage, searchPage, SUB_PAGES, subPage } from "./pages.ts";
import type { WebShopWorld } from "./world.ts";

/** The words of every generated catalogue: kinds, attributes, options (title-cased too), brands, title words. */
function generatorWords(): string[] {
  const title = (s: string) => s.replace(/(^|\s)([a-z])/g, (_, a: string, b: string) => a + b.toUpperCase());
  const words: string[] = [...BRANDS, ...Object.values(TITLE_WORDS).flat(), ...ASIN_POOL];
  for (const k of KINDS) {
    words.push(k.title, k.title.toLowerCase(), k.plural, k.path, k.query);
    for (const a of k.attributes) words.push(a, title(a));
    for (const [name, values] of k.options) words.push(name, title(name), ...values, ...values.map(title));
  }
  return words;
}

/** Names for pretraining's copy strings: the asins' letter runs, brands, attribute and option words. */
export function webShopNames(): string[] {
  const words = new Set<string>();
  for (const w of [...ASIN_POOL.map((a) => a.slice(2)), ...generatorWords()]) {
    for (const piece of w.match(/\p{L}+/gu) ?? []) words.add(piece);
  }
  return [...words];
}

/** The vocabulary over `world`'s pages and goals and every generated catalogue's words. */
export function webShopVocabulary(world: WebShopWorld, prompt: Prompt): TaskVocabulary {
  const corpus = [prompt.user, prompt.assistant, ...generatorWords()];
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
    for (const format of ["react", "action"] as const) corpus.push(...oracleEpisode(world, i, { format }).replies);
  });
  return { corpus, phrases: [] };
}
