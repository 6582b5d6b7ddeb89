/** The built-in word-level tokenizer: exact round trips of TextCraft-like text, ids, and its files. */
import assert from "node:assert/strict";
import { Tokenizer } from "../../src/model/tokenizer.ts";
import { buildWordTokenizerFiles, UNK, wordTokenizer } from "../../src/model/word_tokenizer.ts";

const CORPUS = [
  "Crafting commands:\ncraft 4 oak planks using 1 oak log\ncraft 1 crafting table using 4 oak planks\n" +
  "craft 4 stick using 2 oak planks\n\nGoal: craft crafting table.",
  "Inventory: [oak planks] (4)",
  "Got 1 oak log",
  "Action: get 2 oak log",
  "Could not find enough items to craft minecraft:oak_planks - try again.",
];

/** Texts made only of corpus words, rearranged with spacing the corpus never had. */
const RECOMBINED = [
  ...CORPUS,
  "Action: craft 4 oak planks using 1 oak log",
  "Inventory: [oak log] (12) [stick] (4)\n",
  "  Got 1 stick\n\n\nGot  2  oak planks  ",
  "craft:oak_log-table.(Inventory)[4],Goal_2",
  "Crafting\tcommands :\r\n- get 10 oak log ; [ stick ]",
  // Hugging Face's default decode "clean-up" would eat these spaces.
  "Got 1 stick , craft . oak ' log ! get 2 ? log",
  "",
];

const tok = wordTokenizer(CORPUS);

Deno.test("word tokenizer: decode(encode(text)) === text for any text of known words", () => {
  for (const text of RECOMBINED) {
    const ids = tok.encode(text);
    assert.ok(!ids.includes(tok.id(UNK)), `${JSON.stringify(text)} has an unknown word`);
    assert.equal(tok.decode(ids), text);
  }
  assert.deepEqual(
    tok.encode("Inventory: [oak planks] (4)").map((id) => tok.idToToken(id)),
    ["Inventory", ":", " [", "oak", " planks", "]", " (", "4", ")"],
  );
  assert.equal(tok.encode("Got 1 oak log").length, 4, "one token per word, spaces folded in");
});

Deno.test("word tokenizer: unknown words become [UNK]; special tokens and the chat template work", () => {
  assert.deepEqual(tok.encode("get 2 birch log").map((id) => tok.idToToken(id)), ["get", " 2", UNK, " log"]);
  assert.equal(tok.decode(tok.encode("get 2 birch log")), "get 2[UNK] log");
  assert.deepEqual(tok.special.eos, { token: "<|im_end|>", id: 2 });
  assert.deepEqual(tok.special.pad, { token: "<|endoftext|>", id: 0 });
  assert.deepEqual([...tok.specialIds].sort(), [0, 1, 2]);
  const chat = tok.applyChatTemplate([
    { role: "system", content: "Crafting commands:\ncraft 4 stick using 2 oak planks" },
    { role: "user", content: "Inventory: [oak planks] (4)" },
    { role: "assistant", content: "Action: craft 4 stick using 2 oak planks" },
  ], { addGenerationPrompt: true });
  assert.equal(
    chat,
    "<|im_start|>system\nCrafting commands:\ncraft 4 stick using 2 oak planks<|im_end|>\n" +
      "<|im_start|>user\nInventory: [oak planks] (4)<|im_end|>\n" +
      "<|im_start|>assistant\nAction: craft 4 stick using 2 oak planks<|im_end|>\n<|im_start|>assistant\n",
  );
  const ids = tok.encode(chat);
  assert.deepEqual(ids.slice(0, 3), [1, tok.id("system"), tok.id("\n")]);
  assert.equal(tok.decode(ids), chat);
  assert.equal(tok.decode(ids, { skipSpecialTokens: true }).startsWith("system\nCrafting"), true);
});

Deno.test("word tokenizer: ids are deterministic, by frequency then code-unit order", () => {
  const { tokenizer } = buildWordTokenizerFiles(["b a a", "a c"]);
  const vocab = (tokenizer.model as { vocab: Record<string, number> }).vocab;
  const order = Object.entries(vocab).sort((x, y) => x[1] - y[1]).map(([t]) => t);
  // " a" twice; " c", "a", "b" once each; then unseen forms and the fixed alphabet in code-unit order.
  assert.deepEqual(order.slice(0, 8), ["<|endoftext|>", "<|im_start|>", "<|im_end|>", UNK, " a", " c", "a", "b"]);
  assert.deepEqual(order.slice(8, 13), ["\t", "\n", "\r", " ", " !"]);
  assert.equal(JSON.stringify(buildWordTokenizerFiles(CORPUS)), JSON.stringify(buildWordTokenizerFiles(CORPUS)));
  const small = wordTokenizer(CORPUS, { maxWords: 3 });
  assert.ok(small.vocabSize < tok.vocabSize);
  assert.equal(small.decode(small.encode("oak planks 4")), "oak planks 4", "the most frequent words stay");
  assert.ok(small.encode("Inventory").includes(small.id(UNK)));
});

Deno.test("word tokenizer: tokenizer.json and tokenizer_config.json survive a save and load", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(tok.files.tokenizer, null, 2));
    await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(tok.files.config, null, 2));
    const back = await Tokenizer.load(dir);
    for (const text of RECOMBINED) {
      assert.deepEqual(back.encode(text), tok.encode(text));
      assert.equal(back.decode(back.encode(text)), text);
    }
    assert.equal(back.vocabSize, tok.vocabSize);
    assert.equal(back.applyChatTemplate([{ role: "user", content: "x" }]), "<|im_start|>user\nx<|im_end|>\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("phrases stay whole tokens, longest first, never inside a longer word, and still round-trip", () => {
  const text = "craft 4 dark oak planks using 1 dark oak logs\nget 2 oak logs\nGoal: craft oak planks.";
  const tok = wordTokenizer([text, "oakwood"], {
    phrases: ["oak planks", "dark oak planks", "dark oak logs", "oak logs"],
  });
  const pieces = (s: string) => tok.encode(s).map((i) => tok.idToToken(i));
  assert.deepEqual(pieces("craft 4 dark oak planks using 1 dark oak logs"), [
    "craft",
    " 4",
    " dark oak planks",
    " using",
    " 1",
    " dark oak logs",
  ]);
  assert.deepEqual(pieces("get 2 oak logs"), ["get", " 2", " oak logs"]);
  assert.ok(!pieces("get oak plankss").some((p) => p?.includes("oak planks")), "no phrase inside a longer word");
  assert.equal(tok.decode(tok.encode(text)), text);
  const unseen = wordTokenizer([text], { phrases: ["purpur stairs"] });
  assert.deepEqual(unseen.encode("get 1 purpur stairs").map((i) => unseen.idToToken(i)), [
    "get",
    " 1",
    " purpur stairs",
  ]);
});
