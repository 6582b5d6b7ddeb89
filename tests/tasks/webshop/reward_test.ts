// WebShop's reward (goal.py) against hand-worked cases: upstream's own tests (tests/web-agent-site/engine/
// test_goal.py: type, attribute, option and total rewards, with the numbers upstream asserts), and cases worked by hand
// from goal.py and normalize.py for what those tests leave out: colour normalisation (substring and first-in-list
// rules), a synthetic goal's options iterated as (name, value) pairs, the price cap and each type-reward branch.
import assert from "node:assert/strict";
import { COLOR_SET, normalizeColor } from "../../../tasks/webshop/normalize.ts";
import {
  attributeMatches,
  optionMatches,
  type RewardGoal,
  type RewardProduct,
  tokenSetRatio,
  typeReward,
  webshopReward,
} from "../../../tasks/webshop/reward.ts";

const product = (o: Partial<RewardProduct>): RewardProduct => ({
  query: "query 1",
  productCategory: "a › b › c",
  name: "Name 1",
  title: "",
  attributes: [],
  bulletPoints: [],
  description: "",
  ...o,
});
const goal = (o: Partial<RewardGoal>): RewardGoal => ({
  query: "query 1",
  productCategory: "a › b › c",
  name: "Name 1",
  attributes: [],
  goalOptions: [],
  priceUpper: 40,
  ...o,
});

Deno.test("type reward: query and category matches as upstream's test_get_type_reward", () => {
  const g = goal({});
  let r = typeReward(product({}), g);
  assert.deepEqual(r, { r_type: 1, query_match: true, category_match: true, title_score: 1 });
  assert.equal(typeReward(product({ query: "query 2" }), g).query_match, false);
  const cat = (c: string) => typeReward(product({ productCategory: c }), g).category_match;
  assert.equal(cat("b › c › a"), true); // out of order
  assert.equal(cat("d › e › f"), false);
  assert.equal(cat("a › d › b"), true); // two of three
  assert.equal(cat("a › a › b"), true); // duplicates count once
  assert.equal(cat("a › a › d"), false);
  r = typeReward(
    product({ name: "Minkissy 2pcs Stainless Steel Eyebrow Tweezers Blackhead Acne Remover Portable Makeup Tweezers" }),
    goal({ name: "Rusticware 921ORB Kitchen and Bath Cabinet Knob" }),
  );
  assert.ok(r.title_score < 0.05); // upstream: < 0.05
});

Deno.test("type reward branches: 0.5 without any match, 0.1 under a tenth of the nouns, 0 with none", () => {
  // Goal nouns {shoes, boots, socks, laces, straps, heels, soles, toes, pads, bags, belts} (11 plural nouns).
  const wanted = "shoes boots socks laces straps heels soles toes pads bags belts";
  const g = goal({ name: wanted, query: "q1", productCategory: "x › y › z" });
  const other = (name: string) => typeReward(product({ name, query: "q2", productCategory: "u › v › w" }), g);
  assert.equal(other("shoes boots socks").r_type, 1); // 3/11 > 0.2
  assert.equal(other("shoes boots").r_type, 0.5); // 2/11 = 0.18: no match of any kind
  assert.equal(other("shoes").r_type, 0.1); // 1/11 < 0.1
  assert.equal(other("kettle").r_type, 0);
  // A query match lifts 2/11 to 1, but not 1/11 (the 0.1 rule comes after).
  const sameQuery = (name: string) => typeReward(product({ name, query: "q1", productCategory: "u › v › w" }), g);
  assert.equal(sameQuery("shoes boots").r_type, 1);
  assert.equal(sameQuery("shoes").r_type, 0.1);
  // A goal name without nouns scores 0.2: kept at 1 by a query match, 0.5 without one.
  assert.equal(typeReward(product({}), goal({ name: "very quickly" })).title_score, 0.2);
  assert.equal(typeReward(product({ query: "q2", productCategory: "u" }), goal({ name: "very quickly" })).r_type, 0.5);
});

Deno.test("attribute reward as upstream's test_get_attribute_reward", () => {
  const g = goal({ attributes: ["tea tree", "essential oils", "natural ingredients"] });
  assert.equal(attributeMatches(product({ attributes: ["tea tree", "essential oil", "natural ingredients"] }), g), 3);
  assert.equal(attributeMatches(product({ attributes: ["essential oil", "natural ingredients"] }), g), 2);
  const texts = product({
    bulletPoints: ["This shampoo has essential oils and smells like lemons"],
    description: "Best shampoo on the market, made with natural ingredients",
  });
  assert.equal(attributeMatches(texts, g), 2);
  const none = product({
    attributes: ["tea bag", "earl gray", "lipton"],
    title: "English tea for breakfast",
    bulletPoints: ["Soothing aroma", "Calming, great feeling"],
    description: "Best tea made by Lipton, great to pair with breakfast",
  });
  assert.equal(attributeMatches(none, g), 0);
});

Deno.test("thefuzz token_set_ratio: subsets score 100, near tokens by Levenshtein ratio, processing as thefuzz's", () => {
  assert.equal(tokenSetRatio("essential oil", "essential oils"), 96); // 2*13/27
  assert.equal(tokenSetRatio("Tea-Tree!", "tree TEA"), 100);
  assert.equal(tokenSetRatio("large", "x-large"), 100); // {large} is a subset of {x, large}
  // "large x" against "large size": sect "large", 5+7 and 5+10 characters; the pairs' best is 2*5/12 = 83.
  assert.equal(tokenSetRatio("x-large", "('size', 'large')"), 83);
  assert.equal(tokenSetRatio("", "a"), 0);
  // Code points 128-255 are deleted, not spaced (thefuzz's asciidammit): "café" -> "caf".
  assert.equal(tokenSetRatio("café", "caf"), 100);
  // Underscore is a word character for Python's \W: "a_b" stays one token.
  assert.equal(tokenSetRatio("a_b", "a b"), 67); // "a_b" vs "a b": one substitution (cost 2) in 6 characters
});

Deno.test("option reward as upstream's test_get_option_reward", () => {
  assert.equal(optionMatches(["pack of 12", "grey", "XL"], ["grey", "XL", "pack of 12"]), 3);
  assert.equal(optionMatches(["pack of 12", "blue", "XL"], ["grey", "XL", "pack of 12"]), 2);
  assert.equal(optionMatches(["pack of 12", "powder snow", "XL"], ["cool powder snow", "XL", "pack of 12"]), 3);
  assert.equal(optionMatches(["goal 1", "goal 2"], []), 0);
  assert.equal(optionMatches([], ["goal 1", "goal 2"]), 0);
});

Deno.test("colour normalisation: the first colour of WebShop's list that the option contains", () => {
  assert.equal(COLOR_SET.length, 102);
  assert.equal(normalizeColor("navy blue stripe"), "blue"); // "blue" comes before "navy" in the list
  assert.equal(normalizeColor("standard"), "tan"); // a substring, as upstream's `in`
  assert.equal(normalizeColor("stone washed"), "ash"); // "ash" precedes "stone"
  assert.equal(normalizeColor("x-large"), "x-large");
  // A pair is matched by equality of its parts, never by substring.
  assert.equal(normalizeColor({ name: "color", value: "black" }), "black");
  assert.equal(normalizeColor({ name: "color", value: "black stripe" }), "('color', 'black stripe')");
  // So a chosen "dark navy" (-> "dark", which precedes "navy") fails a goal pair ('color', 'navy') (-> "navy").
  assert.equal(optionMatches(["dark navy"], [{ name: "color", value: "navy" }]), 0);
  assert.equal(optionMatches(["navy"], [{ name: "color", value: "navy" }]), 1);
});

Deno.test("a synthetic goal's options are (name, value) pairs: a value inside the pair's text matches", () => {
  const pairs = [{ name: "color", value: "green stripe" }, { name: "size", value: "large" }];
  // "green stripe" chosen -> "green"; the pair stays "('color', 'green stripe')" -> {color, green, stripe} holds it.
  // "x-large" -> {x, large} against {size, large}: 83, not a match; "large" alone is a subset: 100.
  assert.equal(optionMatches(["green stripe", "x-large"], pairs), 1);
  assert.equal(optionMatches(["green stripe", "large"], pairs), 2);
});

Deno.test("total reward as upstream's test_get_reward", () => {
  const name = "Mens D.O.N. Issue 2 Gca Basketball Sneakers Shoes Casual - Off White";
  const g = goal({
    name,
    attributes: ["tea tree", "essential oils", "natural ingredients"],
    goalOptions: new Map([["color", "grey"], ["size", "XL"]]),
    priceUpper: 40,
  });
  const options = new Map([["color", "grey"], ["size", "XL"]]);
  const p = product({ name, attributes: ["tea tree", "essential oil", "natural ingredients"] });
  assert.equal(webshopReward(p, g, { price: 35, options }).reward, 1);
  const byTexts = product({
    name,
    bulletPoints: ["This shampoo has essential oils and smells like lemons"],
    description: "Best shampoo on the market, made with natural ingredients",
  });
  assert.equal(webshopReward(byTexts, g, { price: 35, options }).reward, 5 / 6); // 2 attrs + 2 options + price
  const three = { ...g, goalOptions: new Map([["color", "grey"], ["size", "XL"], ["amount", "pack of 12"]]) };
  assert.equal(webshopReward(byTexts, three, { price: 35, options }).reward, 5 / 7);
  // Upstream's own test passes the bullet points as a string, so only the description matches (its 0.5714 = 4/7).
  // Over the price cap: the price part is lost.
  const info = webshopReward(byTexts, three, { price: 41, options });
  assert.equal(info.reward, 4 / 7);
  assert.equal(info.r_price, false);
  assert.equal(info.w_price, 1 / 7);
  assert.equal(info.r_option, 2 / 3);
});

Deno.test("nouns: agreement with spaCy on goal.py's own title cases (measured, docs/webshop.md)", () => {
  // Upstream's test_get_type_reward asserts these title scores with spaCy's en_core_web_sm. wink-nlp's tags give the
  // scores below: the same branch of the type reward in all four (a query and category mismatch, so r_type follows
  // the title score alone), the score itself within 0.12.
  const cases: [string, string, number, number][] = [
    [
      "Mens D.O.N. Issue 2 Gca Basketball Sneakers Shoes Casual - Off White",
      "PEAK High Top Mens Basketball Shoes Lou Williams Streetball Master Breathable Non Slip Outdoor Sneakers",
      0.333,
      4 / 9,
    ],
    [
      "Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD Soundbar Home Theater " +
      "System Subwoofer",
      "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR Combo Home Theater System",
      0.3,
      5 / 16,
    ],
    [
      "Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD Soundbar",
      "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR Combo Home Theater System",
      0.15,
      2 / 12,
    ],
    [
      "Rusticware 921ORB Kitchen and Bath Cabinet Knob",
      "Minkissy 2pcs Stainless Steel Eyebrow Tweezers Blackhead Acne Remover Portable Makeup Tweezers (Silver)",
      0,
      0,
    ],
  ];
  const branch = (t: number) => t === 0 ? 0 : t < 0.1 ? 0.1 : t > 0.2 ? 1 : 0.5;
  for (const [wanted, bought, spacy, wink] of cases) {
    const r = typeReward(
      product({ name: bought, query: "q2", productCategory: "u › v › w" }),
      goal({ name: wanted, query: "q1", productCategory: "x › y › z" }),
    );
    assert.equal(r.title_score, wink, wanted);
    assert.equal(r.r_type, branch(spacy), wanted);
    assert.ok(Math.abs(r.title_score - spacy) < 0.12, wanted);
  }
});
