/**
 * What the game server (serve.ts) checks of a request's body, none of which a well-behaved AgentGym client ever trips:
 * POST bodies that are not `application/json` (415), bodies over the size limit (413) or slower than the body timeout
 * (408, with `connection: close`, on which the listener drops the socket), and malformed JSON (FastAPI's 422).
 * `readBody` is the limits alone, for servers that answer in another shape (serve-model). Keys, origins and quotas
 * are access.ts's. No CORS header is ever sent, so a browser page can neither read an answer nor get a preflight
 * through.
 */
import { parseJson, toJson } from "./validate.ts";

/** A JSON response. */
export function json(value: unknown, status: number, headers: Record<string, string> = {}): Response {
  return new Response(toJson(value), { status, headers: { "content-type": "application/json", ...headers } });
}

/** A plain-text response. */
export function text(body: string, status: number): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** A 415 unless the request declares a JSON body (`application/json`, any parameters such as charset). */
export function refuseNonJson(req: Request): Response | undefined {
  const type = req.headers.get("content-type");
  if (type !== null && type.split(";")[0].trim().toLowerCase() === "application/json") return undefined;
  const got = type === null ? "no Content-Type" : `Content-Type ${JSON.stringify(type)}`;
  return json({
    detail: `Unsupported media type: got ${got}; send the body as JSON with Content-Type: application/json.`,
  }, 415);
}

/** Limits on reading a body. */
export interface BodyLimits {
  /** Largest body in bytes; more gets a 413. */
  maxBytes: number;
  /** Time for the whole body to arrive, in milliseconds, counted from when the headers were read; then a 408. */
  timeoutMs: number;
}

/** A body refused by its limits: the status (413, 408 or 400), a message, and headers to send with it. */
export interface BodyRefusal {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** Reads and parses a JSON body: the value, undefined when the body is empty, or the error response. */
export async function readJson(req: Request, limits: BodyLimits): Promise<unknown | Response> {
  const bytes = await readBody(req, limits);
  if (!(bytes instanceof Uint8Array)) return json({ detail: bytes.message }, bytes.status, bytes.headers);
  if (bytes.length === 0) return undefined;
  try {
    return parseJson(new TextDecoder().decode(bytes));
  } catch (e) {
    const problem = {
      type: "json_invalid",
      loc: ["body", 0],
      msg: "JSON decode error",
      input: {},
      ctx: { error: `${e}` },
    };
    return json({ detail: [problem] }, 422);
  }
}

/** Reads a body within the limits, or says why not; on a refusal the rest of the body is cancelled. */
export async function readBody(req: Request, { maxBytes, timeoutMs }: BodyLimits): Promise<Uint8Array | BodyRefusal> {
  const refuse = (status: number, message: string, headers: Record<string, string> = {}) => ({
    status,
    message,
    headers,
  });
  const tooLarge = () => refuse(413, `Request body is larger than the limit of ${maxBytes} bytes.`);
  if (Number(req.headers.get("content-length") ?? "0") > maxBytes) return tooLarge();
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]).catch((e) => e as Error);
      if (next instanceof Error) return refuse(400, `Request body could not be read: ${next.message}`);
      if (next === "late") {
        const detail = `Request body did not arrive within ${timeoutMs / 1000} s; send it whole, then close.`;
        return refuse(408, detail, { connection: "close" });
      }
      if (next.done) break;
      size += next.value.length;
      if (size > maxBytes) return tooLarge();
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) bytes.set(c, (at += c.length) - c.length);
  return bytes;
}
