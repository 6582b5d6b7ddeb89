// Tool calls as Qwen2.5's chat template writes them (its assistant tool-call block, rendered by @huggingface/jinja as
// the rollout renders templates) decode back to the same calls, floats and nested values included; and the tools
// block the template puts in the system prompt carries the documents the server lists.
import assert from "node:assert/strict";
import { Template } from "@huggingface/jinja";
import { decodeCalls } from "../../../tasks/bfcl/calls.ts";
import { callText } from "../../../tasks/bfcl/literal.ts";
import { GENERATED_DOCS } from "../../../tasks/bfcl/tool_docs.ts";

// Qwen2.5-Instruct's chat_template (tokenizer_config.json): its tools header as written, and its assistant branch
// cut down to the tool-call block as written (the content and newline handling around it simplified).
const QWEN25_TOOLS = "{%- if tools %}{{- '<|im_start|>system\\n' }}" +
  '{{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with ' +
  'function signatures within <tools></tools> XML tags:\\n<tools>" }}' +
  '{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}' +
  '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within ' +
  '<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": ' +
  '<args-json-object>}\\n</tool_call><|im_end|>\\n" }}{%- endif %}' +
  '{%- for message in messages %}{%- if message.role == "assistant" %}' +
  "{{- '<|im_start|>' + message.role }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}" +
  "{%- for tool_call in message.tool_calls %}{%- if tool_call.function is defined %}" +
  "{%- set tool_call = tool_call.function %}{%- endif %}" +
  '{{- \'\\n<tool_call>\\n{"name": "\' }}{{- tool_call.name }}{{- \'", "arguments": \' }}' +
  "{{- tool_call.arguments | tojson }}{{- '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}" +
  "{%- endif %}{%- endfor %}";

Deno.test("Qwen2.5's rendered tool calls decode to the same calls", () => {
  const messages = [{
    role: "assistant",
    content: "",
    tool_calls: [
      { type: "function", function: { name: "cd", arguments: { folder: "docs" } } },
      { type: "function", function: { name: "post_tweet", arguments: { content: "Hi 'all'", tags: ["#a", "#b"] } } },
      { type: "function", function: { name: "square_root", arguments: { number: 2.5, precision: 2 } } },
    ],
  }];
  const text = new Template(QWEN25_TOOLS).render({ messages, tools: [] });
  const body = text.replace(/^<\|im_start\|>assistant/, "").replace(/<\|im_end\|>\n$/, "");
  const d = decodeCalls(body);
  assert.equal(d.kind, "calls", text);
  assert.deepEqual(d.kind === "calls" && d.calls.map(callText), [
    "cd(folder='docs')",
    `post_tweet(content="Hi 'all'", tags=['#a', '#b'])`,
    "square_root(number=2.5, precision=2)",
  ]);
});

Deno.test("the template's tools block carries every document, one JSON object a line", () => {
  const tools = GENERATED_DOCS.GorillaFileSystem.map((d) => ({ type: "function", function: d }));
  const text = new Template(QWEN25_TOOLS).render({ messages: [], tools });
  const lines = /<tools>\n([\s\S]*)\n<\/tools>/.exec(text)![1].split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((t) => t.function.name), GENERATED_DOCS.GorillaFileSystem.map((d) => d.name));
});
