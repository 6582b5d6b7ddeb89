/**
 * The model's reply -> the calls it makes, in three forms:
 *
 * - `python`: BFCL's prompting form, `[func(a=1), other(b='x')]`, read as BFCL's decoder reads it (surrounding
 *   backticks, newlines and spaces stripped, brackets added when missing); positional arguments are kept and bound
 *   by the method's Python signature, as Python's `eval` binds them when BFCL executes its ground truth (BFCL's
 *   prompting decoder, `decoded_output_to_execution_list`, would drop them: docs/bfcl.md says where that differs);
 * - `qwen`: Qwen2.5's chat-template form, one `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block per
 *   call, text around the blocks allowed (the template's own layout);
 * - `tiny`: the built-in word-level model's form, one call per line, `call: name key=value key=value` with JSON
 *   literal values (short, regular, and free of nested brackets, so a tiny model learns it from few examples).
 *
 * - `envtuning`: EnvTuning's layout, exactly one `<think>...</think>` then exactly one of
 *   `<tool_call>[{"name": ..., "arguments": {...}}, ...]</tool_call>` or `<answer>...</answer>`, nothing outside the
 *   tags; a violation is answered with EnvTuning's own error text.
 *
 * `auto` picks `qwen` when the reply holds `<tool_call>`, `tiny` when a line starts with `call:`, else `python`.
 * A reply that holds no call attempt is an answer (in BFCL, the end of the user turn); an attempt that does not parse
 * is a format error whose message names the problem.
 *
 * @example
 * ```ts
 * decodeCalls("[cd(folder='docs')]");                   // { kind: "calls", calls: [{ name: "cd", ... }] }
 * decodeCalls('call: cd folder="docs"');                // the same call
 * decodeCalls("The file is in docs.");                  // { kind: "answer" }
 * decodeCalls("[cd(folder='docs'"));                    // { kind: "error", message: "..." }
 * ```
 */
import { callText, parseCallList, type ParsedCall, parseKeywordCall, parseLiteral } from "./literal.ts";
import { jsonDumps } from "./classes/py.ts";

/** The call forms a reply may take. */
export const CALL_FORMATS = ["auto", "python", "qwen", "tiny", "envtuning"] as const;
export type CallFormat = typeof CALL_FORMATS[number];

/** What a reply decodes to. */
export type Decoded =
  | { kind: "calls"; calls: ParsedCall[] }
  | { kind: "answer" }
  | { kind: "error"; message: string };

const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const TINY_LINE = /^\s*call:(.*)$/gm;

/** The form `auto` resolves to for `text`. */
export function detectFormat(text: string): Exclude<CallFormat, "auto"> {
  if (text.includes("<tool_call>")) return "qwen";
  if (/^\s*call:/m.test(text)) return "tiny";
  return "python";
}

/** Decodes the calls of one reply in `format` (default `auto`). */
export function decodeCalls(text: string, format: CallFormat = "auto"): Decoded {
  const f = format === "auto" ? detectFormat(text) : format;
  try {
    if (f === "qwen") return decodeQwen(text);
    if (f === "tiny") return decodeTiny(text);
    if (f === "envtuning") return decodeEnvTuning(text);
    return decodePython(text);
  } catch (e) {
    if (e instanceof SyntaxError) return { kind: "error", message: e.message };
    throw e;
  }
}

function decodePython(text: string): Decoded {
  let body = text.replace(/^[`\n ]+|[`\n ]+$/g, "");
  // A reply without a call attempt is the model's answer to the user.
  if (!/[A-Za-z_][\w.]*\s*\(/.test(body)) return { kind: "answer" };
  body = body.replace(/^'+|'+$/g, "");
  if (!body.startsWith("[")) body = `[${body}`;
  if (!body.endsWith("]")) body = `${body}]`;
  let calls: ParsedCall[];
  try {
    calls = parseCallList(body);
  } catch (e) {
    throw new SyntaxError(
      `The reply is not a list of function calls in the form [func_name(param=value, ...)]: ` +
        `${(e as Error).message}. Write only the calls, with no other text.`,
    );
  }
  if (calls.length === 0) return { kind: "answer" };
  return { kind: "calls", calls };
}

function decodeQwen(text: string): Decoded {
  const calls: ParsedCall[] = [];
  for (const [, body] of text.matchAll(TOOL_CALL)) {
    let v: unknown;
    try {
      v = parseLiteral(body.trim(), { json: true });
    } catch (e) {
      throw new SyntaxError(`A <tool_call> block is not JSON: ${(e as Error).message}`);
    }
    const o = v as Record<string, unknown>;
    if (typeof v !== "object" || v === null || Array.isArray(v) || typeof o.name !== "string") {
      throw new SyntaxError('A <tool_call> block must hold {"name": <function-name>, "arguments": <args-object>}');
    }
    let args: unknown = o.arguments ?? {};
    if (typeof args === "string") {
      try {
        args = parseLiteral(args, { json: true });
      } catch (e) {
        throw new SyntaxError(`The arguments of ${o.name} are a string that is not JSON: ${(e as Error).message}`);
      }
    }
    if (typeof args !== "object" || args === null || Array.isArray(args)) {
      throw new SyntaxError(`The arguments of ${o.name} must be a JSON object of parameter names to values`);
    }
    calls.push({ name: o.name, args: args as ParsedCall["args"], positional: [] });
  }
  if (calls.length === 0) {
    if (text.includes("<tool_call>")) throw new SyntaxError("A <tool_call> block is not closed with </tool_call>");
    return { kind: "answer" };
  }
  return { kind: "calls", calls };
}

function decodeTiny(text: string): Decoded {
  const calls: ParsedCall[] = [];
  for (const [, line] of text.matchAll(TINY_LINE)) {
    try {
      calls.push(parseKeywordCall(line));
    } catch (e) {
      throw new SyntaxError(`The line "call:${line}" is not "call: name key=value ...": ${(e as Error).message}`);
    }
  }
  return calls.length ? { kind: "calls", calls } : { kind: "answer" };
}

function count(text: string, tag: string): RegExpMatchArray[] {
  return [...text.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))];
}

function decodeEnvTuning(reply: string): Decoded {
  const text = reply.trim();
  const error = (message: string): Decoded => ({ kind: "error", message });
  const think = count(text, "think"), tool = count(text, "tool_call"), answer = count(text, "answer");
  if (think.length === 0) return error("Error: Missing <think></think> tags");
  if (think.length > 1) return error("Error: Multiple <think></think> tag pairs found. Only one pair is allowed.");
  if (tool.length > 1) {
    return error("Error: Multiple <tool_call></tool_call> tag pairs found. Only one pair is allowed.");
  }
  if (answer.length > 1) return error("Error: Multiple <answer></answer> tag pairs found. Only one pair is allowed.");
  if (tool.length && answer.length) return error("Error: Response cannot contain both <tool_call> and <answer> tags");
  if (!tool.length && !answer.length) return error("Error: Response must contain either <tool_call> or <answer> tags");
  const outside = text.replace(/<think>[\s\S]*?<\/think>/g, "")
    .replace(tool.length ? /<tool_call>[\s\S]*?<\/tool_call>/g : /<answer>[\s\S]*?<\/answer>/g, "");
  if (outside.trim() !== "") return error("Error: Response must not contain text outside the required XML tags");
  if (answer.length) return { kind: "answer" };
  let list: unknown;
  try {
    list = parseLiteral(tool[0][1].trim(), { json: true });
  } catch (e) {
    return error(`Error: Invalid JSON inside <tool_call>: ${(e as Error).message}`);
  }
  const items = Array.isArray(list) ? list : [list];
  const calls: ParsedCall[] = [];
  for (const item of items) {
    const o = item as Record<string, unknown>;
    const args = o?.arguments ?? {};
    if (typeof o !== "object" || o === null || typeof o.name !== "string" || typeof args !== "object" || !args) {
      return error('Error: Each tool call must be {"name": <function-name>, "arguments": <args-object>}');
    }
    calls.push({ name: o.name, args: args as ParsedCall["args"], positional: [] });
  }
  return calls.length ? { kind: "calls", calls } : { kind: "answer" };
}

/** Writes calls in `format` (the inverse of decodeCalls; `auto` writes BFCL's python form). */
export function encodeCalls(calls: readonly ParsedCall[], format: CallFormat): string {
  if (format === "qwen") {
    return calls.map((c) => `<tool_call>\n${jsonDumps({ name: c.name, arguments: c.args })}\n</tool_call>`)
      .join("\n");
  }
  if (format === "envtuning") {
    const list = calls.map((c) => ({ name: c.name, arguments: c.args }));
    return `<think>I will call the functions the request needs.</think>\n<tool_call>${jsonDumps(list)}</tool_call>`;
  }
  if (format === "tiny") {
    return calls.map((c) =>
      `call: ${c.name}${Object.entries(c.args).map(([k, v]) => ` ${k}=${jsonDumps(v)}`).join("")}`
    ).join("\n");
  }
  return `[${calls.map(callText).join(", ")}]`;
}
