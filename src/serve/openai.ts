/**
 * An OpenAI-compatible HTTP API over Crucible's sampler, so a trained agent plugs into agent frameworks and
 * evaluation harnesses that speak OpenAI: `POST /v1/chat/completions` (messages rendered with the model's own chat
 * template; `tools` passed to the template, and `<tool_call>{...}</tool_call>` blocks in the reply returned as OpenAI
 * `tool_calls`, the Hermes/Qwen convention), `POST /v1/completions` (a raw prompt) and `GET /v1/models`. Both
 * completion routes stream as server-sent events with `stream: true`. Requests run through one DecodeBatcher, so
 * concurrent requests share decode blocks. Errors use OpenAI's shape, `{error: {message, type, param, code}}`, and
 * name the field at fault. vLLM's `top_k` and `ignore_eos` extensions are accepted too.
 */
import type { FinishReason } from "../model/generate.ts";
import type { ChatMessage, Tokenizer } from "../model/tokenizer.ts";
import type { DecodeBatcher } from "./batcher.ts";

/** What the API serves. */
export interface OpenAIOptions {
  batcher: DecodeBatcher;
  tokenizer: Tokenizer;
  /** Ids that end a reply (the model's eos ids). */
  stopIds: readonly number[];
  /** The name `/v1/models` lists and responses echo. */
  modelName: string;
  /** Cache rows per sequence: prompt plus completion. */
  maxLen: number;
  /** Completion tokens when a request names none. */
  defaultMaxTokens?: number;
}

/** A bad request: status 400 with the field at fault. */
class RequestError extends Error {
  constructor(message: string, readonly param: string | null = null) {
    super(message);
  }
}

const TOOL_CALL = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

function errorResponse(status: number, message: string, param: string | null = null, type = "invalid_request_error") {
  return Response.json({ error: { message, type, param, code: null } }, { status });
}

function num(body: Record<string, unknown>, key: string, dflt: number, lo: number, hi = Infinity): number {
  const v = body[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < lo || v > hi) {
    throw new RequestError(`${key} must be a number in [${lo}, ${hi}], got ${JSON.stringify(v)}`, key);
  }
  return v;
}

function stops(body: Record<string, unknown>): string[] {
  const s = body.stop;
  if (s === undefined || s === null) return [];
  const list = typeof s === "string" ? [s] : s;
  if (!Array.isArray(list) || list.some((x) => typeof x !== "string" || x === "") || list.length > 4) {
    throw new RequestError("stop must be a non-empty string or a list of up to 4 of them", "stop");
  }
  return list as string[];
}

/** A message's text: a string, or the text parts of a content list. */
function contentText(c: unknown, at: string): string {
  if (c === null || c === undefined) return "";
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    return c.map((p, i) => {
      if (p?.type !== "text" || typeof p.text !== "string") {
        throw new RequestError(
          `${at}[${i}] must be a text part ({type: "text", text}); this model reads text only`,
          at,
        );
      }
      return p.text;
    }).join("");
  }
  throw new RequestError(`${at} must be a string or a list of text parts`, at);
}

function chatMessages(body: Record<string, unknown>): ChatMessage[] {
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) {
    throw new RequestError("messages must be a non-empty list of {role, content}", "messages");
  }
  return msgs.map((m, i) => {
    if (typeof m?.role !== "string") throw new RequestError(`messages[${i}].role must be a string`, "messages");
    const out: Record<string, unknown> = { ...m, content: contentText(m.content, `messages[${i}].content`) };
    // Templates read tool-call arguments as objects; OpenAI sends them as JSON text.
    if (Array.isArray(m.tool_calls)) {
      out.tool_calls = m.tool_calls.map((t: { function?: { name?: string; arguments?: unknown } }) => {
        const args = t.function?.arguments;
        let parsed = args;
        if (typeof args === "string") {
          try {
            parsed = JSON.parse(args);
          } catch {
            parsed = args;
          }
        }
        return { ...t, function: { ...t.function, arguments: parsed } };
      });
    }
    return out as unknown as ChatMessage;
  });
}

/** Splits a finished reply into text and OpenAI tool calls (Hermes/Qwen `<tool_call>` JSON blocks). */
export function toolCalls(text: string): { content: string | null; calls: unknown[] } {
  const calls: unknown[] = [];
  const rest = text.replace(TOOL_CALL, (whole, json: string) => {
    try {
      const v = JSON.parse(json);
      if (typeof v?.name !== "string") return whole;
      calls.push({
        id: `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
        type: "function",
        function: { name: v.name, arguments: JSON.stringify(v.arguments ?? v.parameters ?? {}) },
      });
      return "";
    } catch {
      return whole;
    }
  });
  return { content: calls.length > 0 && rest.trim() === "" ? null : rest, calls };
}

/** Incremental text of a growing list of ids: what is safe to show, holding back a possible stop string's start. */
class TextTracker {
  ids: number[] = [];
  shown = 0;
  text = "";
  stopAt = -1;
  constructor(readonly tok: Tokenizer, readonly stopStrings: string[]) {}

  /** Adds ids; returns the newly safe text. */
  add(ids: number[], final: boolean): string {
    this.ids.push(...ids);
    this.text = this.tok.decode(this.ids, { skipSpecialTokens: true });
    for (const s of this.stopStrings) {
      const at = this.text.indexOf(s);
      if (at >= 0 && (this.stopAt < 0 || at < this.stopAt)) this.stopAt = at;
    }
    if (this.stopAt >= 0) this.text = this.text.slice(0, this.stopAt);
    let safe = this.text.length;
    if (!final && this.stopAt < 0) {
      // An unfinished UTF-8 sequence decodes as U+FFFD; a stop string may be starting at the end.
      while (safe > this.shown && this.text[safe - 1] === "\uFFFD") safe--;
      const hold = Math.max(0, ...this.stopStrings.map((s) => s.length - 1));
      safe = Math.max(this.shown, safe - hold);
    }
    const out = this.text.slice(this.shown, safe);
    this.shown = safe;
    return out;
  }
}

const finishName = (f: FinishReason | "cancelled" | undefined, stopped: boolean) =>
  stopped || f === "stop" ? "stop" : "length";

let counter = 0;

/** The request handler; `serveOpenAI` puts it on a port. */
export function openAIHandler(o: OpenAIOptions): (req: Request) => Promise<Response> {
  const created = () => Math.floor(Date.now() / 1000);
  return async (req) => {
    const url = new URL(req.url);
    try {
      if (req.method === "GET" && url.pathname === "/v1/models") {
        return Response.json({
          object: "list",
          data: [{ id: o.modelName, object: "model", created: created(), owned_by: "crucible" }],
        });
      }
      const chat = url.pathname === "/v1/chat/completions";
      if (req.method !== "POST" || (!chat && url.pathname !== "/v1/completions")) {
        return errorResponse(
          404,
          `No route ${req.method} ${url.pathname}; this server has GET /v1/models, ` +
            "POST /v1/chat/completions and POST /v1/completions",
          null,
          "not_found_error",
        );
      }
      let body: Record<string, unknown>;
      try {
        body = await req.json();
      } catch {
        throw new RequestError("The request body must be JSON");
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw new RequestError("The request body must be a JSON object");
      }
      return await complete(o, body, chat, created());
    } catch (e) {
      if (e instanceof RequestError) return errorResponse(400, e.message, e.param);
      return errorResponse(500, (e as Error).message ?? String(e), null, "server_error");
    }
  };
}

async function complete(
  o: OpenAIOptions,
  body: Record<string, unknown>,
  chat: boolean,
  created: number,
): Promise<Response> {
  if (num(body, "n", 1, 1, 1) !== 1) throw new RequestError("n must be 1", "n");
  const tools = body.tools;
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) {
    throw new RequestError("tools must be a list", "tools");
  }
  let promptText: string;
  if (chat) {
    const variables = Array.isArray(tools) && tools.length > 0 ? { tools } : undefined;
    promptText = o.tokenizer.applyChatTemplate(chatMessages(body), { addGenerationPrompt: true, variables });
  } else {
    const p = Array.isArray(body.prompt) && body.prompt.length === 1 ? body.prompt[0] : body.prompt;
    if (typeof p !== "string" || p === "") throw new RequestError("prompt must be a non-empty string", "prompt");
    promptText = p;
  }
  const prompt = o.tokenizer.encode(promptText);
  if (prompt.length >= o.maxLen) {
    throw new RequestError(
      `The prompt is ${prompt.length} tokens; this server holds at most ${o.maxLen} per sequence (start it with a ` +
        "larger --max-len)",
      chat ? "messages" : "prompt",
    );
  }
  const asked = body.max_completion_tokens ?? body.max_tokens;
  const room = o.maxLen - prompt.length;
  const maxTokens = Math.min(num({ m: asked }, "m", Math.min(o.defaultMaxTokens ?? 256, room), 1), room);
  const settings = {
    temperature: num(body, "temperature", 1, 0, 2),
    topP: num(body, "top_p", 1, 0, 1),
    topK: num(body, "top_k", 0, 0),
  };
  const seed = num(body, "seed", 0x5eed + counter++, -(2 ** 31), 2 ** 31 - 1) | 0;
  const text = new TextTracker(o.tokenizer, stops(body));
  const id = `${chat ? "chatcmpl" : "cmpl"}-${crypto.randomUUID().replaceAll("-", "")}`;
  const usage = () => ({
    prompt_tokens: prompt.length,
    completion_tokens: text.ids.length,
    total_tokens: prompt.length + text.ids.length,
  });
  const base = { id, created, model: o.modelName };
  const withTools = chat && Array.isArray(tools) && tools.length > 0;
  let finish: string | undefined;
  // Set when a streaming client goes away: its request leaves the batch at the next block.
  const signal = { aborted: false };
  const request = (onText: (s: string) => void) => ({
    prompt,
    maxTokens,
    stopIds: body.ignore_eos === true ? [] : o.stopIds,
    settings,
    seed,
    cancelled: () => signal.aborted,
    onTokens(ids: number[], f?: FinishReason | "cancelled") {
      const before = text.stopAt;
      const piece = text.add(ids, f !== undefined);
      if (piece) onText(piece);
      const stopped = before < 0 && text.stopAt >= 0;
      if (f !== undefined || stopped) finish = finishName(f, text.stopAt >= 0);
      return stopped;
    },
  });

  if (body.stream !== true) {
    await o.batcher.run(request(() => {}));
    if (!chat) {
      return Response.json({
        ...base,
        object: "text_completion",
        choices: [{ index: 0, text: text.text, logprobs: null, finish_reason: finish }],
        usage: usage(),
      });
    }
    const { content, calls } = withTools ? toolCalls(text.text) : { content: text.text, calls: [] };
    const message = { role: "assistant", content, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
    return Response.json({
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? "tool_calls" : finish }],
      usage: usage(),
    });
  }

  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const enc = new TextEncoder();
  const object = chat ? "chat.completion.chunk" : "text_completion";
  const chunk = (delta: Record<string, unknown> | string, finishReason: string | null = null) =>
    enc.encode(`data: ${
      JSON.stringify({
        ...base,
        object,
        choices: [
          chat
            ? { index: 0, delta, logprobs: null, finish_reason: finishReason }
            : { index: 0, text: delta, logprobs: null, finish_reason: finishReason },
        ],
        ...(includeUsage ? { usage: null } : {}),
      })
    }\n\n`);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      if (chat) c.enqueue(chunk({ role: "assistant", content: "" }));
      // With tools the reply is held until it ends: a tool call is only known once its block closes.
      const onText = (s: string) => {
        if (!withTools && !signal.aborted) c.enqueue(chunk(chat ? { content: s } : s));
      };
      o.batcher.run(request(onText)).then(() => {
        if (signal.aborted) return; // the stream was cancelled: nothing more may be written
        let reason = finish ?? "stop";
        if (withTools) {
          const { content, calls } = toolCalls(text.text);
          if (content) c.enqueue(chunk({ content }));
          if (calls.length > 0) {
            c.enqueue(chunk({ tool_calls: calls.map((t, index) => ({ index, ...(t as object) })) }));
            reason = "tool_calls";
          }
        }
        c.enqueue(chunk(chat ? {} : "", reason));
        if (includeUsage) {
          c.enqueue(enc.encode(`data: ${JSON.stringify({ ...base, object, choices: [], usage: usage() })}\n\n`));
        }
        c.enqueue(enc.encode("data: [DONE]\n\n"));
        c.close();
      }, (e) => {
        if (!signal.aborted) c.error(e);
      });
    },
    cancel() {
      signal.aborted = true;
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "connection": "keep-alive" },
  });
}

/**
 * Serves the API on `hostname:port` (port 0 picks a free one); returns its base URL (…/v1) and a shutdown.
 *
 * @example
 * ```ts
 * const s = serveOpenAI({ batcher, tokenizer, stopIds, modelName: "agent", maxLen: 4096 }, { port: 8000 });
 * // new OpenAI({ baseURL: s.url, apiKey: "none" })
 * ```
 */
export function serveOpenAI(
  o: OpenAIOptions,
  at: { port?: number; hostname?: string } = {},
): { url: string; shutdown: () => Promise<void> } {
  const server = Deno.serve(
    { port: at.port ?? 0, hostname: at.hostname ?? "127.0.0.1", onListen: () => {} },
    openAIHandler(o),
  );
  const host = at.hostname?.includes(":") ? `[${at.hostname}]` : (at.hostname ?? "127.0.0.1");
  return { url: `http://${host}:${server.addr.port}/v1`, shutdown: () => server.shutdown() };
}
