// Crucible's BM25 (tasks/webshop/search.ts) against Lucene 8's own, run by tests/tasks/webshop/lucene/LuceneBm25.java
// over the generated catalogue's documents and every goal's search words and full instruction: the top 50 of each
// query, their order and scores. Runs where Java and Lucene 8's jars are installed (Debian: default-jdk-headless,
// liblucene8-java; LUCENE_JARS=dir to point elsewhere), and is ignored elsewhere.
import assert from "node:assert/strict";
import { generatedSource } from "../../../tasks/webshop/data.ts";
import { searchWords } from "../../../tasks/webshop/oracle.ts";
import { SearchEngine } from "../../../tasks/webshop/search.ts";
import { documentText } from "../../../tasks/webshop/world.ts";

const JARS = Deno.env.get("LUCENE_JARS") ?? "/usr/share/java";
const jar = (name: string) => {
  try {
    return [...Deno.readDirSync(JARS)].find((e) => e.name.startsWith(`${name}-8.`) && e.name.endsWith(".jar"))?.name;
  } catch {
    return undefined;
  }
};
const core = jar("lucene-core"), common = jar("lucene-analyzers-common");
const java = await new Deno.Command("java", { args: ["-version"], stderr: "null", stdout: "null" }).output()
  .then((o) => o.success, () => false);

/** Lucene's top 50 (id, score) for each query. */
async function lucene(docs: { id: string; text: string }[], queries: string[]): Promise<[string, number][][]> {
  const input = [String(docs.length), ...docs.map((d) => `${d.id}\t${d.text.replace(/[\t\n]/g, " ")}`), ...queries]
    .join("\n") + "\n";
  const source = new URL("./lucene/LuceneBm25.java", import.meta.url).pathname;
  const child = new Deno.Command("java", {
    args: ["-cp", `${JARS}/${core}:${JARS}/${common}`, source],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await child.output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).split("\n").slice(0, queries.length).map((line) =>
    line === "" ? [] : line.split("\t").map((h) => {
      const [id, score] = h.split(" ");
      return [id, Number(score)] as [string, number];
    })
  );
}

Deno.test({
  name: "BM25 against Lucene 8: the same top 50, in the same order, scores within float rounding",
  ignore: !java || !core || !common,
  async fn() {
    const { world } = generatedSource();
    const docs = world.catalog.products.map((p) => ({ id: p.asin, text: documentText(p) }));
    const queries = [
      ...new Set(world.goals.flatMap((g) => [searchWords(g), g.instructionText]).map((q) => q.toLowerCase())),
    ];
    const want = await lucene(docs, queries);
    const engine = new SearchEngine(docs);
    let sameOrder = 0, worst = 0;
    queries.forEach((q, i) => {
      const got = engine.search(q, 50);
      if (got.map((h) => h.id).join() === want[i].map(([id]) => id).join()) sameOrder++;
      got.forEach((h, k) => worst = Math.max(worst, Math.abs(h.score - (want[i][k]?.[1] ?? NaN)) || 0));
    });
    console.log(
      `${sameOrder} of ${queries.length} queries: the same top 50 in the same order; ` +
        `largest score difference ${worst.toExponential(2)}`,
    );
    assert.equal(sameOrder, queries.length);
    assert.ok(worst < 1e-5, `largest score difference ${worst}`);
  },
});

// Texts where word segmentation rules differ between ICU and Lucene, each a document and a query.
const TRICKY = [
  "women's x-large t-shirt",
  "3.5 oz bottle",
  "1,000 pcs",
  "u.s.a. made",
  "e-mail me",
  "a_b test",
  "don't stop",
  "café au lait",
  "naïve résumé",
  "4k ultra-hd",
  "usb-c 20000mah",
  "wi-fi 6",
  '12" inch',
  "item#123",
  "50% off",
  "$19.99 deal",
  "日本語のテキスト",
  "咖啡豆",
  "😀 smile",
  "l'oréal paris",
  "jean’s pocket",
  "co-op",
  "ABC123def",
  "10x20",
  "2.5mm jack",
  "o'neill",
  "rock'n'roll",
  "c++ book",
  "ipad/iphone",
  "a.b.c",
  "3-pack",
  `5'11" tall`,
  "hello...world",
  "x86_64",
  "mother-in-law's",
  "größe xl",
  "a:b",
  "mr.smith",
  "a.1",
];

Deno.test({
  name: "BM25 against Lucene 8 on texts whose segmentation is tricky (punctuation, scripts, emoji)",
  ignore: !java || !core || !common,
  async fn() {
    const docs = TRICKY.map((text, i) => ({ id: `D${String(i).padStart(3, "0")}`, text }));
    const want = await lucene(docs, TRICKY);
    const engine = new SearchEngine(docs);
    TRICKY.forEach((q, i) => {
      const got = engine.search(q, 50);
      assert.deepEqual(got.map((h) => h.id), want[i].map(([id]) => id), q);
      got.forEach((h, k) => assert.ok(Math.abs(h.score - want[i][k][1]) < 1e-5, `${q}: ${h.score} ${want[i][k][1]}`));
    });
  },
});
