/**
 * The listener of every HTTP server of Crucible's (the game servers and serve-model): Deno's `node:http` server bridged
 * to a web-standard handler (`(Request) => Promise<Response>`), chosen over `Deno.serve` for its limits on slow
 * clients. Checked with Deno 2.9:
 * `Deno.serve` has no header read timeout (a connection stalled inside its headers or idle between requests stays
 * open for good), and a handler cannot close a connection whose body is still arriving, because a pending read of the
 * body cannot be cancelled; such a connection held about 200 KB until its client went away. Here `headersTimeoutMs`
 * bounds the request line and headers (node answers 408 and closes), the handler's own body timer answers 408 with a
 * JSON detail and `connection: close`, after which the socket is destroyed, `requestTimeoutMs` backs both up, and an
 * idle keep-alive connection is closed after a minute. Headers are capped at node's 16 KB. A response of
 * `text/event-stream` (serve-model's streamed completions) is written as it is produced, chunk by chunk, and its
 * body is cancelled when the client goes away; any other is sent whole, with its length.
 *
 * @example
 * ```ts
 * let url = "";
 * const options = { hostname: "127.0.0.1", port: 0, headersTimeoutMs: 10_000, requestTimeoutMs: 21_000 };
 * const server = await listen(() => Promise.resolve(new Response("hi")), () => url, options);
 * url = `http://127.0.0.1:${server.port}`;
 * console.log(await (await fetch(url)).text()); // "hi"
 * await server.shutdown();
 * ```
 */
import http from "node:http";

/** A web-standard handler that is also told the client's address (the TCP peer, without port). */
export type Handler = (req: Request, client: { address: string }) => Promise<Response>;

/** Methods a `Request` cannot carry (the fetch standard forbids them): answered 405 before the handler. */
const FORBIDDEN = new Set(["CONNECT", "TRACE", "TRACK"]);

/** Where and how long to wait. */
export interface ListenOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** Time for the request line and headers to arrive. */
  headersTimeoutMs: number;
  /** Time for a whole request, headers and body; a backstop behind the handler's own body timer. */
  requestTimeoutMs: number;
  /** The server's name in its 405 and 500 messages ("TextCraft", "BFCL"); default "The server". */
  name?: string;
}

/** A listening server. */
export interface Listening {
  port: number;
  /** Stops accepting, lets the requests in flight finish, then closes every connection. */
  shutdown(): Promise<void>;
}

/**
 * Serves `handler` over HTTP/1.1. `base` gives the scheme and host of request URLs (the path and query are the
 * request's own); it is called once per request, after listening, so it may depend on the port.
 */
export async function listen(
  handler: Handler,
  base: () => string,
  options: ListenOptions,
): Promise<Listening> {
  const inFlight = new Set<Promise<void>>();
  const server = http.createServer({
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    keepAliveTimeout: 60_000,
    // How often node looks for connections past their header or request time; its default is 30 s.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, options.headersTimeoutMs / 4)),
  } as http.ServerOptions, (req, res) => {
    const done = answer(handler, base(), req, res, options.name ?? "The server").finally(() => inFlight.delete(done));
    inFlight.add(done);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as { port: number }).port,
    async shutdown() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await closed;
    },
  };
}

async function answer(
  handler: Handler,
  base: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  name: string,
) {
  let response: Response;
  try {
    const method = req.method ?? "GET";
    if (FORBIDDEN.has(method.toUpperCase())) {
      const detail = `Method ${method} is not served; ${name} answers GET and POST.`;
      response = new Response(JSON.stringify({ detail }), {
        status: 405,
        headers: { "content-type": "application/json", allow: "GET, POST" },
      });
      return send(req, res, response);
    }
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const url = URL.parse(req.url ?? "/", base) ?? new URL("/", base);
    const body = method === "GET" || method === "HEAD" ? undefined : bodyOf(req);
    response = await handler(new Request(url, { method, headers, body }), { address: req.socket.remoteAddress ?? "" });
  } catch (e) {
    // A bug of the server (client errors are answered before this): its stack for the operator, nothing to the client.
    console.error(`${name}: ${req.method} ${req.url} failed:`, e);
    response = new Response("Internal Server Error", { status: 500 });
  }
  await send(req, res, response);
}

async function send(req: http.IncomingMessage, res: http.ServerResponse, response: Response): Promise<void> {
  if (response.body && response.headers.get("content-type")?.startsWith("text/event-stream")) {
    return await stream(res, response);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), "content-length": String(bytes.length) });
  // A refusal that leaves the body unread asks to close: drop the socket once the answer is out.
  if (response.headers.get("connection") === "close") res.once("finish", () => req.socket.destroy());
  res.end(bytes);
}

/** Writes an event stream as it comes; a client that goes away cancels it (the producer sees its cancel()). */
async function stream(res: http.ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  const reader = response.body!.getReader();
  let gone = false;
  res.once("close", () => {
    gone = !res.writableFinished;
    if (gone) reader.cancel().catch(() => {});
  });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || gone) break;
      // Backpressure: wait for the socket to drain (or close) before the next chunk.
      if (!res.write(value)) await new Promise((r) => (res.once("drain", r), res.once("close", r)));
    }
  } catch { /* the producer failed or was cancelled: end what was sent */ }
  res.end();
}

// The request body as a web stream. Cancelling it stops delivery and lets node read and discard the rest (or the
// socket be destroyed after a `connection: close` answer); it never tears the socket down before the answer is sent.
function bodyOf(req: http.IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  const onData = (chunk: Uint8Array) => {
    if (!open) return;
    controller.enqueue(chunk);
    if ((controller.desiredSize ?? 0) <= 0) req.pause();
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const finish = (error?: unknown) => {
    if (!open) return;
    open = false;
    if (error === undefined) controller.close();
    else controller.error(error);
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      req.on("data", onData);
      req.once("end", () => finish());
      req.once("error", (e) => finish(e));
    },
    pull() {
      req.resume();
    },
    cancel() {
      open = false;
      req.off("data", onData);
      req.resume();
    },
  });
}
