/**
 * An OpenAI-compatible HTTP API over Crucible's sampler, so a trained agent plugs into agent frameworks and
 * evaluation harnesses that speak OpenAI: `POST /v1/chat/completions` (messages rendered with the model's own chat
 * template; `tools` passed to the template, and `<tool_call>{...}</tool_call>` blocks in the reply returned as OpenAI
 * `tool_calls`, the Hermes/Qwen convention), `POST /v1/completions` (a raw prompt) and `GET /v1/models`. Both
 * completion routes stream as server-sent events with `stream: true`. Requests run through one DecodeBatcher, so
 * concurrent requests share decode blocks. Errors use OpenAI's shape, `{error: {message, type, param, code}}`, and
 * name the field at fault. vLLM's `top_k` and `ignore_eos` extensions are accepted too.
 *
 * Who may call it is the environment servers' rule (src/env/server/access.ts): loopback asks no key unless given
 * one; bound beyond loopback it will not start without a key, which every request carries as `Authorization: Bearer
 * KEY` (a 401 without it); a Host it does not answer to gets a 421 and browser pages of other origins a 403. Each
 * client (its address, and its key when several are given) holds at most `perClient` requests in flight (a 429 past
 * it), and a body past `maxBodyBytes` or slower than `bodyTimeoutMs` is refused (413, 408), all in OpenAI's error
 * shape. It listens on the environment servers' listener (src/env/server/listen.ts): headers slower than
 * `headersTimeoutMs` get a 408 and their connection closed, and idle connections are closed after a minute.
 */
import { Access, ClientCounts, servedNames } from "../env/server/access.ts";
import { readBody } from "../env/server/guard.ts";
import { listen } from "../env/server/listen.ts";
import type { FinishReason } from "../model/generate.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { DecodeBatcher } from "./batcher.ts";
import { chatMessages, num, RequestError, stops, TextTracker, toolCalls } from "./request.ts";

export { toolCalls } from "./request.ts";

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
  /** Requests one client may have in flight (decoding or waiting for a slot); more get a 429. Default 64. */
  perClient?: number;
  /** Largest request body, in bytes; more gets a 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Time for a request body to arrive, in milliseconds; then a 408. Default 10 s. */
  bodyTimeoutMs?: number;
}

/** Where and for whom the API is served. */
export interface ServeAt {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1; beyond loopback `keys` must hold a key. */
  hostname?: string;
  /** Keys one of which every request must carry (serve-model --api-key, CRUCIBLE_API_KEY); default none. */
  keys?: readonly string[];
  /** Names a request's Host may carry beyond loopback's and `hostname` (serve-model --allowed-host). */
  allowedHosts?: readonly string[];
  /** Time for a request's line and headers to arrive, in milliseconds; then a 408 and the connection closed. */
  headersTimeoutMs?: number;
}

function errorResponse(
  status: number,
  message: string,
  param: string | null = null,
  type = "invalid_request_error",
  code: string | null = null,
  headers: Record<string, string> = {},
) {
  return Response.json({ error: { message, type, param, code } }, { status, headers });
}

const finishName = (f: FinishReason | "cancelled" | undefined, stopped: boolean) =>
  stopped || f === "stop" ? "stop" : "length";

let counter = 0;

/**
 * The request handler; `serveOpenAI` puts it on a port. `client` is the TCP peer's address (quotas are per client);
 * `access` decides who may call (default: anyone, as on loopback without a key).
 */
export function openAIHandler(
  o: OpenAIOptions,
  access: Access = new Access({ hostname: "127.0.0.1", title: "serve-model", keyFlag: "--api-key", keyEnv: KEY_ENV }),
): (req: Request, client?: { address: string }) => Promise<Response> {
  const created = () => Math.floor(Date.now() / 1000);
  const inFlight = new ClientCounts(), perClient = o.perClient ?? 64;
  const limits = { maxBytes: o.maxBodyBytes ?? 1 << 20, timeoutMs: o.bodyTimeoutMs ?? 10_000 };
  return async (req, peer) => {
    const url = new URL(req.url);
    const who = access.check(req, peer?.address ?? "");
    if ("status" in who) {
      return errorResponse(who.status, who.message, null, "invalid_request_error", who.code, who.headers);
    }
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
      if (inFlight.count(who.client) >= perClient) {
        return errorResponse(
          429,
          `This client already has ${perClient} requests in flight, the most one client may (serve-model ` +
            "--max-requests-per-client); send the next when one has finished.",
          null,
          "requests",
          "rate_limit_exceeded",
        );
      }
      const bytes = await readBody(req, limits);
      if (!(bytes instanceof Uint8Array)) {
        return errorResponse(bytes.status, bytes.message, null, "invalid_request_error", null, bytes.headers);
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        throw new RequestError("The request body must be JSON");
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw new RequestError("The request body must be a JSON object");
      }
      inFlight.add(who.client);
      let held = true;
      const release = () => held && (held = false, inFlight.remove(who.client));
      try {
        return await complete(o, body, chat, created(), release);
      } catch (e) {
        release();
        throw e;
      }
    } catch (e) {
      if (e instanceof RequestError) return errorResponse(400, e.message, e.param);
      return errorResponse(500, (e as Error).message ?? String(e), null, "server_error");
    }
  };
}

/** The environment variable serve-model reads a key from. */
export const KEY_ENV = "CRUCIBLE_API_KEY";

async function complete(
  o: OpenAIOptions,
  body: Record<string, unknown>,
  chat: boolean,
  created: number,
  /** Called once the request has left the batcher (its quota place is free again). */
  release: () => void,
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
    await o.batcher.run(request(() => {})).finally(release);
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
      o.batcher.run(request(onText)).finally(release).then(() => {
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
 * Serves the API on `hostname:port` (port 0 picks a free one); resolves to its base URL (…/v1), port and a shutdown
 * once it listens. Rejects with a RangeError, before anything listens, when bound beyond loopback without a key (see
 * the module header).
 *
 * @example
 * ```ts
 * const s = await serveOpenAI({ batcher, tokenizer, stopIds, modelName: "agent", maxLen: 4096 }, { port: 8000 });
 * // new OpenAI({ baseURL: s.url, apiKey: "none" })
 * ```
 */
export async function serveOpenAI(
  o: OpenAIOptions,
  at: ServeAt = {},
): Promise<{ url: string; port: number; shutdown: () => Promise<void> }> {
  const hostname = at.hostname ?? "127.0.0.1";
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  let origin = "";
  const access = new Access({
    hostname,
    keys: at.keys,
    title: "serve-model",
    keyFlag: "--api-key",
    keyEnv: KEY_ENV,
    origin: () => origin,
    hosts: servedNames(hostname, at.allowedHosts),
  });
  const handler = openAIHandler(o, access);
  const headersTimeoutMs = at.headersTimeoutMs ?? 10_000;
  const server = await listen(handler, () => origin, {
    hostname,
    port: at.port ?? 0,
    headersTimeoutMs,
    requestTimeoutMs: headersTimeoutMs + (o.bodyTimeoutMs ?? 10_000) + 1000,
    name: "serve-model",
  });
  origin = `http://${host}:${server.port}`;
  return { url: `${origin}/v1`, port: server.port, shutdown: server.shutdown };
}
