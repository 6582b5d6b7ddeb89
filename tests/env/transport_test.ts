import assert from "node:assert/strict";
import { envClient } from "../../tasks/mod.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { babyai } from "../../tasks/babyai.ts";
import type { EnvError } from "../../src/env/errors.ts";
import { Transport } from "../../src/env/http.ts";
import { z } from "zod";
import { fakeServer, json, playScripts } from "./helpers.ts";

const Any = z.unknown();

Deno.test("5xx is retried with backoff then reported with status, route and body; 4xx is never retried", async () => {
  const server = fakeServer((path) =>
    path === "/boom" ? new Response("Internal Server Error", { status: 500 }) : json({ detail: "bad" }, 422)
  );
  const t = new Transport({ urls: [server.url], retries: 2, backoffMs: 5 });
  try {
    const e500 = await t.request(server.url, "POST", "/boom", Any, { body: {} }).catch((e) => e) as EnvError;
    assert.equal(e500.kind, "http");
    assert.equal(e500.status, 500);
    assert.equal(e500.route, "POST /boom");
    assert.equal(e500.body, "Internal Server Error");
    assert.equal(e500.attempts, 3);
    const e422 = await t.request(server.url, "POST", "/bad", Any, { body: {} }).catch((e) => e) as EnvError;
    assert.equal(e422.status, 422);
    assert.equal(e422.attempts, 1);
    assert.deepEqual(server.requests.map((r) => r.path), ["/boom", "/boom", "/boom", "/bad"]);
  } finally {
    t.close();
    await server.close();
  }
});

Deno.test("a server that recovers within the retries answers normally", async () => {
  const server = fakeServer((_p, _b, n) => n < 3 ? new Response("busy", { status: 503 }) : json({ id: 9 }));
  const t = new Transport({ urls: [server.url], retries: 3, backoffMs: 1 });
  try {
    assert.deepEqual(await t.request(server.url, "POST", "/create", z.object({ id: z.number() })), { id: 9 });
  } finally {
    t.close();
    await server.close();
  }
});

Deno.test("a hanging server times out, a dropped connection is a connection failure, a bad shape is a shape error", async () => {
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  const hang = fakeServer(() => held.then(() => json("late")));
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dropping = (async () => {
    for await (const conn of listener) conn.close();
  })();
  const drop = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  const shape = fakeServer(() => json({ id: "seven" }));
  const t = new Transport({ urls: [hang.url, drop, shape.url], timeoutMs: 150, retries: 1, backoffMs: 1 });
  try {
    const timeout = await t.request(hang.url, "GET", "/", Any).catch((e) => e) as EnvError;
    assert.equal(timeout.kind, "timeout");
    assert.equal(timeout.status, null);
    assert.equal(timeout.attempts, 2);
    const dropped = await t.request(drop, "GET", "/", Any).catch((e) => e) as EnvError;
    assert.equal(dropped.kind, "connection");
    assert.equal(dropped.attempts, 2);
    const bad = await t.request(shape.url, "POST", "/create", z.object({ id: z.number() })).catch((e) => e) as EnvError;
    assert.equal(bad.kind, "shape");
    assert.equal(bad.attempts, 1);
    assert.deepEqual(t.health().map((s) => s.healthy), [false, false, true]);
  } finally {
    t.close();
    release();
    listener.close();
    await dropping.catch(() => {});
    await hang.close();
    await shape.close();
  }
});

Deno.test("creates go round-robin, skip a dead server, and the health check brings it back", async () => {
  const a = fakeServer(() => json({ id: 1 }));
  // A port that was free a moment ago: nothing listens there until the server below starts.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const dead = `http://127.0.0.1:${deadPort}`;
  const client = envClient("babyai", { urls: [a.url, dead], retries: 0, healthIntervalMs: 30, timeoutMs: 500 });
  let b: Deno.HttpServer | undefined;
  try {
    const servers = [];
    for (let i = 0; i < 4; i++) servers.push((await client.create()).server);
    assert.deepEqual(servers, [a.url, a.url, a.url, a.url]);
    assert.deepEqual(client.transport.health().map((s) => s.healthy), [true, false]);
    b = Deno.serve({ hostname: "127.0.0.1", port: deadPort, onListen() {} }, () => json({ id: 2 }));
    for (let i = 0; i < 50 && !client.transport.health()[1].healthy; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(client.transport.health()[1].healthy, "the health check did not restore the server");
    const next = [(await client.create()).server, (await client.create()).server];
    assert.deepEqual(next.sort(), [a.url, dead].sort());
  } finally {
    client.close();
    await a.close();
    await b?.shutdown();
  }
});

Deno.test("a create answered 5xx past its retries moves to the next server; a 4xx does not", async () => {
  const failing = fakeServer(() => new Response("Service Unavailable", { status: 503 }));
  const refusing = fakeServer(() => json({ detail: "bad request" }, 422));
  const good = fakeServer(() => json({ id: 7 }));
  const client = envClient("babyai", { urls: [failing.url, good.url], retries: 1, backoffMs: 5 });
  const strict = envClient("babyai", { urls: [refusing.url, good.url], retries: 1, backoffMs: 5 });
  try {
    for (let i = 0; i < 4; i++) assert.equal((await client.create()).server, good.url);
    // Round-robin puts each create on the failing server first: tried twice (retries=1), then passed over.
    assert.equal(failing.requests.length, 4 * 2);
    // Still healthy: a 5xx is an answer, so the server is not taken out, only passed over for this create.
    assert.deepEqual(client.transport.health().map((s) => s.healthy), [true, true]);
    const e = await strict.create().catch((e) => e) as EnvError;
    assert.equal(e.status, 422);
    assert.equal(good.requests.length, 4, "a refused create is not tried elsewhere");
  } finally {
    client.close();
    strict.close();
    await Promise.all([failing.close(), refusing.close(), good.close()]);
  }
});

Deno.test("with every server dead, create fails as unavailable", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dead = `http://127.0.0.1:${(probe.addr as Deno.NetAddr).port}`;
  probe.close();
  const client = envClient("textcraft", { urls: [dead], retries: 0, healthIntervalMs: 60_000 });
  try {
    assert.equal((await client.create().catch((e) => e) as EnvError).kind, "connection");
    assert.equal((await client.create().catch((e) => e) as EnvError).kind, "unavailable");
  } finally {
    client.close();
  }
});

Deno.test("requests in flight per server stay under the cap", async () => {
  let now = 0;
  let peak = 0;
  const server = fakeServer(async () => {
    peak = Math.max(peak, ++now);
    await new Promise((r) => setTimeout(r, 10));
    now--;
    return json(1);
  });
  const t = new Transport({ urls: [server.url], maxInFlight: 3 });
  try {
    await Promise.all(Array.from({ length: 20 }, () => t.request(server.url, "GET", "/", Any)));
    assert.equal(peak, 3);
  } finally {
    t.close();
    await server.close();
  }
});

Deno.test("an episode whose server fails is an env_failure, distinct from an episode that earns 0", async () => {
  let failing = false;
  const server = fakeServer((path) => {
    if (path === "/create") return json({ id: 0 });
    if (path === "/reset") return json({ observation: "go", reward: 0, score: 0, deleted: false, done: false });
    if (path === "/close") return json(true);
    return failing ? new Response("Internal Server Error", { status: 500 }) : json({
      observation: "nothing",
      reward: 0,
      score: 0,
      done: false,
    });
  });
  const client = envClient("babyai", { urls: [server.url], retries: 1, backoffMs: 1 });
  const tok = wordTokenizer(["Action: turn left", "go nothing"]);
  try {
    const [ok] = await playScripts(client, babyai, tok, [{ index: 0, replies: ["Action: turn left"] }], 3);
    assert.equal(ok.finish, "max_rounds");
    assert.equal(ok.reward, 0);
    assert.equal(ok.turns.length, 3);
    failing = true;
    const [bad] = await playScripts(client, babyai, tok, [{ index: 0, replies: ["Action: turn left"] }], 3);
    assert.equal(bad.finish, "env_failure");
    assert.equal(bad.reward, null);
    assert.match(bad.error ?? "", /500/);
    assert.equal(server.requests.filter((r) => r.path === "/close").length, 2, "both episodes close");
    await assert.rejects(playScripts(client, babyai, tok, [{ index: 0, replies: [""] }], 0), RangeError);
  } finally {
    client.close();
    await server.close();
  }
});

Deno.test("bad transport settings are RangeErrors naming the value", () => {
  assert.throws(() => new Transport({ urls: [] }), /at least one server/);
  assert.throws(() => new Transport({ urls: ["localhost:36001"] }), /localhost:36001/);
  assert.throws(() => new Transport({ urls: ["http://127.0.0.1:1"], timeoutMs: 0 }), /timeoutMs/);
});

Deno.test("GET /tasks: a server that never answers is an error naming it, after the read's own short retries", async () => {
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  const hang = fakeServer(() => held.then(() => json({ count: 1 })));
  // The transport's own limits would retry three times; the read of the task set retries once.
  const client = envClient("bfcl", { urls: [hang.url], timeoutMs: 150, retries: 3, backoffMs: 1 });
  try {
    const e = await client.tasks().catch((e) => e) as EnvError;
    assert.equal(e.kind, "timeout");
    assert.equal(e.attempts, 2);
    assert.equal(hang.requests.length, 2);
    assert.ok(e.message.startsWith(`GET /tasks (${hang.url}/tasks): no answer within 150 ms after 2 attempts.`));
    assert.match(e.message, new RegExp(`server at ${hang.url} must say which tasks it holds`));
    assert.match(e.message, new RegExp(`curl ${hang.url}/tasks`));
  } finally {
    client.close();
    release();
    await hang.close();
  }
});

Deno.test("GET /tasks: the read's limits are its own, shorter than a slow transport's", async () => {
  const { promise: held, resolve: release } = Promise.withResolvers<void>();
  const hang = fakeServer(() => held.then(() => json({ count: 1 })));
  const client = envClient("bfcl", { urls: [hang.url] }); // 60 s a request, 3 retries: minutes on a silent server
  try {
    assert.deepEqual(client.transport.limits, { timeoutMs: 60_000, retries: 3 });
    const t0 = performance.now();
    await assert.rejects(client.tasks({ timeoutMs: 100, retries: 0 }), /no answer within 100 ms\. The bfcl server/);
    assert.ok(performance.now() - t0 < 5_000);
    assert.equal(hang.requests.length, 1);
  } finally {
    client.close();
    release();
    await hang.close();
  }
});

Deno.test("GET /tasks: a 5xx past the retries is an error, a 404 (a server without the route) skips the check", async () => {
  const failing = fakeServer(() => new Response("Service Unavailable", { status: 503 }));
  const old = fakeServer(() => json({ detail: "Not Found" }, 404));
  const client = envClient("bfcl", { urls: [failing.url], backoffMs: 1 });
  const upstream = envClient("bfcl", { urls: [old.url], backoffMs: 1 });
  try {
    const e = await client.tasks().catch((e) => e) as EnvError;
    assert.equal(e.status, 503);
    assert.equal(e.body, "Service Unavailable");
    assert.equal(failing.requests.length, 2);
    assert.match(e.message, new RegExp(`HTTP 503 after 2 attempts\\. The bfcl server at ${failing.url} `));
    assert.equal(await upstream.tasks(), undefined);
    assert.equal(old.requests.length, 1);
  } finally {
    client.close();
    upstream.close();
    await Promise.all([failing.close(), old.close()]);
  }
});
