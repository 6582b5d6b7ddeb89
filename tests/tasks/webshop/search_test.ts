// WebShop's search (pyserini's BM25, k1 0.9, b 0.4, over Anserini's English analysis) against scores worked by hand
// on a four-document catalogue, Lucene's one-byte length norm, the analyzer's steps, and ties broken by id.
import assert from "node:assert/strict";
import { analyze, encodedLength, SearchEngine, tokenize } from "../../../tasks/webshop/search.ts";

Deno.test("analysis: word segments, possessives, lower case, Lucene's stop words, Porter stems", () => {
  assert.deepEqual(analyze("The Men's RUNNING Shoes, for hiking"), ["men", "run", "shoe", "hike"]);
  assert.deepEqual(analyze("x-large 3.5 oz, 1,000 pcs"), ["x", "larg", "3.5", "oz", "1,000", "pc"]);
  assert.deepEqual(analyze("it is not such a thing"), ["thing"]);
  assert.deepEqual(analyze("relational conditional"), ["relat", "condit"]);
});

Deno.test("segmentation as Lucene's StandardTokenizer: letters across . and :, one token per ideograph, emoji", () => {
  assert.deepEqual(tokenize("u.s.a. made a:b e.g. 3.5 a.1"), ["u.s.a", "made", "a:b", "e.g", "3.5", "a", "1"]);
  assert.deepEqual(tokenize("日本語のテキスト"), ["日", "本", "語", "の", "テキスト"]);
  assert.deepEqual(tokenize("😀 smile"), ["😀", "smile"]);
});

Deno.test("Lucene's length norm: exact below 24, four significant bits above", () => {
  const cases: [number, number][] = [
    [0, 0],
    [23, 23],
    [24, 24],
    [31, 31],
    [32, 32],
    [33, 33],
    [40, 40],
    [41, 40],
    [47, 46],
    [100, 96],
    [1000, 984],
  ];
  for (const [n, want] of cases) assert.equal(encodedLength(n), want, `length ${n}`);
});

// A: red, run, shoe, men (4 terms); B: blue, shoe (2); C: run, sock, red, blue (4); D: men, watch (2). avgdl 3.
const DOCS = [
  { id: "B0000000A1", text: "red running shoes for men" },
  { id: "B0000000B2", text: "blue shoes" },
  { id: "B0000000C3", text: "running socks, red and blue" },
  { id: "B0000000D4", text: "the men's watch" },
];
const idf = (df: number) => Math.log(1 + (4 - df + 0.5) / (df + 0.5));
const part = (tf: number, dl: number) => tf / (tf + 0.9 * (0.6 + 0.4 * dl / 3));

Deno.test("BM25 scores and ranking worked by hand", () => {
  const engine = new SearchEngine(DOCS);
  const hits = engine.search("red shoes");
  // red: df 2 (A, C); shoe: df 2 (A, B); idf = ln 2 for both.
  const want = [
    { id: "B0000000A1", score: idf(2) * part(1, 4) * 2 }, // 0.6863
    { id: "B0000000B2", score: idf(2) * part(1, 2) }, // 0.3894
    { id: "B0000000C3", score: idf(2) * part(1, 4) }, // 0.3431
  ];
  assert.deepEqual(hits.map((h) => h.id), want.map((w) => w.id));
  hits.forEach((h, i) =>
    assert.ok(Math.abs(h.score - want[i].score) < 1e-6, `${h.id}: ${h.score} vs ${want[i].score}`)
  );
  // "men's" is indexed as "men": the shorter D ranks above A.
  assert.deepEqual(engine.search("men").map((h) => h.id), ["B0000000D4", "B0000000A1"]);
  assert.ok(Math.abs(engine.search("men")[0].score - idf(2) * part(1, 2)) < 1e-6);
  // A rare term outweighs a common one: sock (df 1) puts C first.
  assert.equal(engine.search("red socks")[0].id, "B0000000C3");
  assert.ok(Math.abs(engine.search("red socks")[0].score - (idf(2) + idf(1)) * part(1, 4)) < 1e-6);
  // A repeated query word counts again, as a repeated clause in Lucene's boolean query.
  const twice = engine.search("shoes shoes");
  assert.deepEqual(twice.map((h) => h.id), ["B0000000B2", "B0000000A1"]);
  assert.ok(Math.abs(twice[0].score - 2 * idf(2) * part(1, 2)) < 1e-6);
  assert.deepEqual(engine.search("the and of"), []);
  assert.deepEqual(engine.search("kettle"), []);
});

Deno.test("ties go to the smaller id, and at most k hits come back", () => {
  const engine = new SearchEngine([
    { id: "B000000002", text: "lamp" },
    { id: "B000000003", text: "lamp" },
    { id: "B000000001", text: "lamp" },
  ]);
  assert.deepEqual(engine.search("lamp").map((h) => h.id), ["B000000001", "B000000002", "B000000003"]);
  assert.equal(engine.search("lamp", 2).length, 2);
});

Deno.test("term frequency saturates with k1 and long documents are damped by b", () => {
  const engine = new SearchEngine([
    { id: "B000000001", text: "tea tea tea" },
    { id: "B000000002", text: "tea cup" },
  ]);
  const [first, second] = engine.search("tea");
  assert.equal(first.id, "B000000001");
  const i = Math.log(1 + (2 - 2 + 0.5) / 2.5); // N = 2, df = 2
  const norm = (dl: number) => 0.9 * (0.6 + 0.4 * dl / 2.5);
  assert.ok(Math.abs(first.score - i * 3 / (3 + norm(3))) < 1e-6);
  assert.ok(Math.abs(second.score - i * 1 / (1 + norm(2))) < 1e-6);
});
