/**
 * What the game server (serve.ts) checks before a route sees a request, none of which a well-behaved AgentGym client
 * ever trips: browser requests from other origins (403), POST bodies that are not `application/json` (415), bodies over
 * the size limit (413) or slower than the body timeout (408, with `connection: close`, on which the listener drops
 * the socket), and malformed JSON (FastAPI's 422). No CORS header is ever sent, so a browser page can neither read an
 * answer nor get a preflight through.
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

/**
 * A 403 for a request a browser sent from a page of another origin: an `Origin` header other than `ownOrigin`, or a
 * `Sec-Fetch-Site` of `cross-site` or `same-site` (the only signal on a cross-origin `<img>` or form GET); undefined
 * for everything else. Clients outside browsers (Python, curl, Deno's fetch) send neither header.
 */
export function refuseCrossOrigin(req: Request, ownOrigin: string): Response | undefined {
  const origin = req.headers.get("origin");
  if (origin !== null && origin !== ownOrigin) {
    return json({ detail: `Cross-origin request refused: Origin ${origin} is not this server's ${ownOrigin}.` }, 403);
  }
  const site = req.headers.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") {
    return json({ detail: `Cross-origin request refused: Sec-Fetch-Site is ${site}.` }, 403);
  }
  return undefined;
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

/** Reads and parses a JSON body: the value, undefined when the body is empty, or the error response. */
export async function readJson(req: Request, limits: BodyLimits): Promise<unknown | Response> {
  const bytes = await readBytes(req, limits);
  if (bytes instanceof Response) return bytes;
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

// Reads the body within the limits; on a refusal the rest of the body is cancelled.
async function readBytes(req: Request, { maxBytes, timeoutMs }: BodyLimits): Promise<Uint8Array | Response> {
  const tooLarge = () => json({ detail: `Request body is larger than the limit of ${maxBytes} bytes.` }, 413);
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
      if (next instanceof Error) return json({ detail: `Request body could not be read: ${next.message}` }, 400);
      if (next === "late") {
        const detail = `Request body did not arrive within ${timeoutMs / 1000} s; send it whole, then close.`;
        return json({ detail }, 408, { connection: "close" });
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
