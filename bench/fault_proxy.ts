/**
 * A fault proxy for `bench faults` and the tests that run Crucible against a half-working environment: an HTTP
 * server on loopback in front of a real one that passes each request through, or answers it badly (garbage, 500,
 * 503), as `decide` says per request. Seeded decisions keep a flaky run alike from one run to the next.
 */
import { Rng } from "../src/util/random.ts";

/** What the proxy does with one request. */
export type Fault = "pass" | "garbage" | "500" | "503";

/** A running proxy. */
export interface FaultProxy {
  url: string;
  /** Requests seen, by what was done with them. */
  counts: Record<Fault, number>;
  /** Changes the rule for later requests. */
  set(decide: (route: string) => Fault): void;
  shutdown(): Promise<void>;
}

/** A rule that answers `share` of the requests on `routes` (all when empty) with `fault`, seeded. */
export function flaky(fault: Fault, share: number, routes: string[] = [], seed = 1): (route: string) => Fault {
  const rng = new Rng(seed);
  return (route) => (routes.length === 0 || routes.includes(route)) && rng.float() < share ? fault : "pass";
}

/** Starts a proxy on a free loopback port in front of `target` (a base URL). */
export function faultProxy(target: string, decide: (route: string) => Fault): FaultProxy {
  const counts: Record<Fault, number> = { pass: 0, garbage: 0, "500": 0, "503": 0 };
  let rule = decide;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const fault = rule(`${req.method} ${url.pathname}`);
    counts[fault]++;
    const body = req.method === "POST" ? await req.text() : undefined;
    if (fault === "500") return new Response("Internal Server Error", { status: 500 });
    if (fault === "503") return new Response("Service Unavailable", { status: 503 });
    const r = await fetch(`${target}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body });
    const bytes = await r.arrayBuffer();
    if (fault === "garbage") return new Response("<html>garbage", { headers: { "content-type": "application/json" } });
    return new Response(bytes, { status: r.status, headers: r.headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    counts,
    set: (d) => (rule = d),
    shutdown: () => server.shutdown(),
  };
}
