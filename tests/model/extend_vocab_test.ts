// Extending a word-level model's vocabulary (src/model/extend_vocab.ts), checked on the float64 reference
// (tests/reference/model.ts): the old columns' logits are the old model's exactly, the new rows are the means of
// their text's old rows, old text keeps its ids and new phrases become one token. Runs without a GPU.
import assert from "node:assert/strict";
import { parseModelConfig } from "../../src/model/config.ts";
import { extendVocabulary } from "../../src/model/extend_vocab.ts";
import { EMBED, LM_HEAD } from "../../src/model/plan.ts";
import { Tokenizer } from "../../src/model/tokenizer.ts";
import { buildWordTokenizerFiles, wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { modelLogitsRef, type RefParams } from "../reference/model.ts";
import { ARCHS, BASE, randomParams, toF32 } from "./golden.ts";

const f64 = (m: Map<string, Float32Array>): RefParams => new Map([...m].map(([k, v]) => [k, Float64Array.from(v)]));

const CORPUS = ["craft 4 oak planks using 1 oak log", "get 2 oak log", "Inventory: [oak planks] (4)"];
const PHRASES = ["oak planks", "oak log"];
const oldTok = wordTokenizer(CORPUS, { phrases: PHRASES });
// Today's vocabulary: the same corpus plus a new word (stick) and a new phrase (using 9).
const target = wordTokenizer([...CORPUS, "craft 4 stick using 2 oak planks"], { phrases: [...PHRASES, "using 9"] });

function model(overrides: Record<string, unknown>, tokenizer = oldTok) {
  const config = parseModelConfig({ ...BASE, ...overrides, vocab_size: tokenizer.vocabSize });
  return { config, tensors: toF32(randomParams(config, 7)), tokenizer };
}

for (const [name, overrides] of ARCHS.slice(0, 2)) {
  Deno.test(`an extended model computes the old logits on the old columns, with new ones beside them (${name})`, () => {
    const old = model(overrides);
    const ext = extendVocabulary(old, target);
    const V = old.config.vocabSize, N = ext.added.length;
    assert.deepEqual(ext.added, ["stick", " stick", "using 9", " using 9"].sort((a, b) => target.id(a) - target.id(b)));
    assert.equal(ext.config.vocabSize, V + N);
    assert.equal(ext.tokenizer.vocabSize, V + N);
    const seqs = [oldTok.encode("craft 4 oak planks using 1 oak log"), [3, 17, 5, V - 1, 9, 1], [V - 2]];
    const before = modelLogitsRef(old.config, f64(old.tensors), { seqs });
    const after = modelLogitsRef(ext.config, f64(ext.tensors), { seqs });
    const T = seqs.flat().length;
    assert.equal(after.length, T * (V + N), "N more columns");
    const oldColumns = new Float64Array(T * V);
    for (let t = 0; t < T; t++) oldColumns.set(after.subarray(t * (V + N), t * (V + N) + V), t * V);
    assert.deepEqual(oldColumns, before);
    // The new columns are not copies of old ones: the model can tell the new tokens apart.
    const col = (t: number, v: number) => after[t * (V + N) + v];
    assert.notEqual(col(0, V), col(0, V + 1));
  });

  Deno.test(`a new token's rows are the mean of the old rows of its text (${name})`, () => {
    const old = model(overrides);
    const ext = extendVocabulary(old, target);
    const C = old.config.hiddenSize, id = ext.tokenizer.id(" using 9");
    const a = oldTok.id(" using"), b = oldTok.id(" 9");
    const names = old.config.tieWordEmbeddings ? [EMBED] : [EMBED, LM_HEAD];
    for (const n of names) {
      const w = old.tensors.get(n)!, e = ext.tensors.get(n)!;
      const want = Array.from({ length: C }, (_, c) => Math.fround((w[a * C + c] + w[b * C + c]) / 2));
      assert.deepEqual([...e.subarray(id * C, (id + 1) * C)], want, n);
      // A word the old vocabulary never had was [UNK] to it: its row starts as [UNK]'s.
      const s = ext.tokenizer.id("stick"), unk = oldTok.id("[UNK]");
      assert.deepEqual(e.subarray(s * C, (s + 1) * C), w.subarray(unk * C, (unk + 1) * C), n);
      assert.deepEqual(e.subarray(0, w.length), w, `${n}: the old rows are kept`);
    }
    assert.equal(old.config.tieWordEmbeddings, !ext.tensors.has(LM_HEAD));
  });
}

Deno.test("the extended tokenizer keeps old text's ids and reads a new phrase as one token", () => {
  const ext = extendVocabulary(model(ARCHS[1][1]), target).tokenizer;
  for (const text of [...CORPUS, "craft 9 oak log using 3 oak planks\n<|im_end|>"]) {
    assert.deepEqual(ext.encode(text), oldTok.encode(text), text);
  }
  const text = "craft 1 stick using 9 oak log";
  const ids = ext.encode(text);
  assert.ok(ids.includes(ext.id(" using 9")) && ids.includes(ext.id(" stick")), JSON.stringify(ids));
  assert.ok(ids.every((id) => id !== ext.id("[UNK]")));
  assert.equal(ext.decode(ids), text);
  assert.ok(oldTok.encode(text).includes(oldTok.id("[UNK]")), "the old tokenizer did not know stick");
  // Everything but the vocabulary and the split pattern is the old tokenizer's.
  assert.deepEqual(ext.files.config, oldTok.files.config);
  assert.deepEqual(ext.files.tokenizer.added_tokens, oldTok.files.tokenizer.added_tokens);
  assert.deepEqual(ext.files.tokenizer.decoder, oldTok.files.tokenizer.decoder);
});

Deno.test("nothing to add returns the model as it was", () => {
  const old = model(ARCHS[0][1]);
  const same = extendVocabulary(old, wordTokenizer(CORPUS.toReversed(), { phrases: PHRASES }));
  assert.deepEqual(same.added, []);
  assert.equal(same.tensors, old.tensors);
  assert.equal(same.tokenizer, old.tokenizer);
  assert.equal(same.config, old.config);
});

Deno.test("extending refuses a target that drops a token, another kind of tokenizer, other specials, padding rows", () => {
  const old = model(ARCHS[1][1]);
  const dropped = wordTokenizer(["craft 4 oak planks using 1", "get 2 oak"], { phrases: ["oak planks"] });
  assert.throws(() => extendVocabulary(old, dropped), /target lacks \d+ of the model's tokens \(.*"oak log"/);
  const files = buildWordTokenizerFiles(CORPUS, { phrases: PHRASES });
  const bpe = Tokenizer.fromJson({
    ...files.tokenizer,
    model: { type: "BPE", vocab: (files.tokenizer.model as { vocab: object }).vocab, merges: [] },
  }, files.config);
  assert.throws(() => extendVocabulary(old, bpe), /target tokenizer is BPE, not WordLevel/);
  assert.throws(() => extendVocabulary({ ...old, tokenizer: bpe }, target), /model's tokenizer is BPE, not WordLevel/);
  const added = structuredClone(target.files.tokenizer) as { added_tokens: { special: boolean }[] };
  added.added_tokens[0].special = false;
  assert.throws(
    () => extendVocabulary(old, Tokenizer.fromJson(added, target.files.config)),
    /target's added tokens differ/,
  );
  const padded = model(ARCHS[1][1]);
  const config = parseModelConfig({ ...BASE, ...ARCHS[1][1], vocab_size: oldTok.vocabSize + 3 });
  assert.throws(
    () => extendVocabulary({ ...padded, config, tensors: toF32(randomParams(config, 1)) }, target),
    new RangeError(
      `Extending a vocabulary: the model has ${oldTok.vocabSize + 3} embedding rows for ${oldTok.vocabSize} ` +
        "token ids; appending after padding rows is not supported",
    ),
  );
});
