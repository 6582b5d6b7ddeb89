// The OpenAI-compatible API driven by the official `openai` npm client on loopback, over models/crucible-tiny on
// the GPU: greedy replies equal Crucible's own sampler on the same prompt, streamed deltas add up to the whole reply,
// concurrent requests share decode blocks and each still gets its own reply, stop strings cut the reply, and bad
// requests come back as OpenAI errors naming the field. Tool-call parsing is checked without a GPU.
import assert from "node:assert/strict";
import { Generator } from "../../src/model/generate.ts";
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
    const server = serveOpenAI({ batcher, tokenizer: tok, stopIds: g.stopIds, modelName: "tiny", maxLen });
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
