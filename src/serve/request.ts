/**
 * What serve-model reads from a request and writes back as text: numbers and stop strings checked with the field at
 * fault, OpenAI messages for a chat template, `<tool_call>` blocks as OpenAI tool calls, and the text of a growing
 * reply that is safe to stream.
 */
import type { ChatMessage, Tokenizer } from "../model/tokenizer.ts";

/** A bad request: status 400 with the field at fault. */
export class RequestError extends Error {
  constructor(message: string, readonly param: string | null = null) {
    super(message);
  }
}

const TOOL_CALL = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g;

/** A request's number `key` in [lo, hi], or `dflt` when absent; a RequestError names the field otherwise. */
export function num(body: Record<string, unknown>, key: string, dflt: number, lo: number, hi = Infinity): number {
  const v = body[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < lo || v > hi) {
    throw new RequestError(`${key} must be a number in [${lo}, ${hi}], got ${JSON.stringify(v)}`, key);
  }
  return v;
}

/** A request's stop strings (`stop`: one string or up to 4), checked. */
export function stops(body: Record<string, unknown>): string[] {
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

/** A chat request's messages as the chat template reads them (tool-call arguments parsed from JSON text). */
export function chatMessages(body: Record<string, unknown>): ChatMessage[] {
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
export class TextTracker {
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
