// What the TextCraft server adds to upstream's protocol against other clients, stale ones and slow ones (issue 18):
// random ids, the clear error for a stale or reaped id, idle reaping, JSON-only bodies, same-origin browser requests,
// header and body timeouts that close the connection, and the warning when bound beyond loopback.
import assert from "node:assert/strict";
import { EnvTable } from "../../../../src/env/server/envs.ts";
import { isLoopback } from "../../../../src/env/server/serve.ts";
import { serveTextCraft } from "../../../../tasks/textcraft/game/server.ts";
import { get, notValid, post, tree, withTextCraft } from "../../../env/helpers.ts";

const JSON_TYPE = { "content-type": "application/json" };

async function createIds(url: string, n: number): Promise<number[]> {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(((await post(`${url}/create`, {})).body as { id: number }).id);
  return ids;
}

/** Writes `text` on a raw connection and reads until the server closes it (or `limitMs` passes). */
async function halfSend(port: number, text: string, limitMs: number): Promise<{ answer: string; closedMs: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const started = performance.now();
  await conn.write(new TextEncoder().encode(text));
  const timer = setTimeout(() => conn.close(), limitMs);
  let answer = "";
  const buf = new Uint8Array(4096);
  try {
    for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
      answer += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
  } catch {
    // Closed by the timer above (the server never closed it), or reset by the server.
  }
  clearTimeout(timer);
  return { answer, closedMs: performance.now() - started };
}

Deno.test("ids are random safe integers, not sequential, and differ between two servers", async () => {
  const [a, b] = await Promise.all([serveTextCraft({ port: 0, tree }), serveTextCraft({ port: 0, tree })]);
  try {
    const ids = [...await createIds(a.url, 10), ...await createIds(b.url, 10)];
    assert.ok(ids.every((id) => Number.isSafeInteger(id) && id >= 0), `${ids}`);
    assert.equal(new Set(ids).size, 20);
    const sorted = ids.toSorted((x, y) => x - y);
    // A counter puts twenty ids within 20 of each other; twenty draws from [0, 2^53) all fall within 2^40 of each
    // other with probability about 20 * 2^(-13 * 19).
    assert.ok(sorted.at(-1)! - sorted[0] > 2 ** 40, `${sorted}`);
  } finally {
    await Promise.all([a.shutdown(), b.shutdown()]);
  }
});

Deno.test("a stale id from before a restart on the same port gets the clear error, never another's env", async () => {
  const first = await serveTextCraft({ port: 0, tree });
  const [stale] = await createIds(first.url, 1);
  await first.shutdown();
  const second = await serveTextCraft({ port: first.port, tree });
  try {
    const fresh = await createIds(second.url, 5);
    assert.ok(!fresh.includes(stale));
    assert.deepEqual(await post(`${second.url}/step`, { id: stale, action: "inventory" }), {
      status: 200,
      body: notValid(stale),
    });
    assert.match(notValid(stale).error, /^The id \d+ is not valid\. .*restarted/);
    assert.deepEqual(await post(`${second.url}/close`, { id: stale }), { status: 200, body: false });
  } finally {
    await second.shutdown();
  }
});

Deno.test("an environment untouched for the idle time is reaped; one in use is kept", async () => {
  await withTextCraft(async ({ url }) => {
    const [idle, busy] = await createIds(url, 2);
    const until = performance.now() + 2000;
    while (performance.now() < until) {
      assert.equal((await get(`${url}/detail?id=${busy}`)).status, 200);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(await post(`${url}/step`, { id: idle, action: "inventory" }), {
      status: 200,
      body: notValid(idle, "0.8 s"),
    });
    assert.deepEqual((await get(`${url}/observation?id=${idle}`)).body, notValid(idle, "0.8 s"));
    const step = await post(`${url}/step`, { id: busy, action: "inventory" });
    assert.deepEqual(step.body, { observation: "Inventory: You are not carrying anything.", reward: 0, done: false });
  }, { idleMs: 800 });
});

Deno.test("the table reaps in order of last use on a fake clock, and 0 never reaps", () => {
  let now = 0;
  const table = new EnvTable<string>({ idleMs: 100, now: () => now });
  const a = table.add("a"), b = table.add("b"), c = table.add("c");
  now = 60;
  assert.equal(table.get(a), "a");
  now = 100;
  assert.equal(table.size, 1, "b and c idle for exactly the limit, a used since");
  assert.equal(table.get(b), undefined);
  assert.equal(table.get(c), undefined);
  now = 159;
  assert.equal(table.get(a), "a");
  assert.equal(table.delete(a), true);
  assert.equal(table.delete(a), false);
  table.add("e");
  now = 10_000;
  assert.equal(table.size, 0);
  const forever = new EnvTable<string>({ idleMs: 0, now: () => now });
  const d = forever.add("d");
  now = 1e12;
  assert.equal(forever.get(d), "d");
  assert.throws(() => new EnvTable({ idleMs: -1 }), RangeError);
});

Deno.test("POST bodies must be application/json: anything else is a 415 naming both types", async () => {
  await withTextCraft(async ({ url }) => {
    const text = await fetch(`${url}/create`, { method: "POST", body: "{}" });
    assert.equal(text.status, 415);
    const detail = (await text.json()).detail as string;
    assert.match(detail, /text\/plain;charset=UTF-8/);
    assert.match(detail, /application\/json/);
    const none = await fetch(`${url}/step`, { method: "POST", body: new TextEncoder().encode('{"id": 1}') });
    assert.equal(none.status, 415);
    assert.match((await none.json()).detail, /no Content-Type/);
    const form = await fetch(`${url}/close`, { method: "POST", body: new URLSearchParams({ id: "1" }) });
    assert.equal(form.status, 415);
    await form.body?.cancel();
    const charset = { "content-type": "Application/JSON; charset=utf-8" };
    const ok = await fetch(`${url}/create`, { method: "POST", headers: charset, body: "{}" });
    assert.equal(ok.status, 200);
    assert.ok(Number.isSafeInteger((await ok.json()).id));
  });
});

Deno.test("browser requests from another origin get a 403, no response carries CORS headers", async () => {
  await withTextCraft(async ({ url }) => {
    const evil = { ...JSON_TYPE, origin: "http://evil.example" };
    const cross = await fetch(`${url}/create`, { method: "POST", headers: evil, body: "{}" });
    assert.equal(cross.status, 403);
    assert.match((await cross.json()).detail, /Origin http:\/\/evil\.example is not this server's/);
    const preflight = await fetch(`${url}/step`, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    assert.equal(preflight.status, 403);
    await preflight.body?.cancel();
    const sameSite = await fetch(`${url}/observation?id=1`, { headers: { "sec-fetch-site": "same-site" } });
    assert.equal(sameSite.status, 403);
    await sameSite.body?.cancel();
    const own = await fetch(`${url}/create`, { method: "POST", headers: { ...JSON_TYPE, origin: url }, body: "{}" });
    assert.equal(own.status, 200);
    await own.body?.cancel();
    for (const res of [cross, preflight, sameSite, own]) {
      assert.deepEqual([...res.headers.keys()].filter((k) => k.startsWith("access-control-")), []);
    }
    assert.deepEqual(await get(`${url}/`), { status: 200, body: "This is environment TextCraft." });
  });
});

Deno.test("a half-sent body is answered 408 within the body timeout and its connection closed", async () => {
  await withTextCraft(async ({ url, port }) => {
    const head =
      "POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
    const stalled = halfSend(port, `${head}{"id": 1, "act`, 5000);
    // The server keeps answering others meanwhile.
    assert.deepEqual(await get(`${url}/`), { status: 200, body: "This is environment TextCraft." });
    const { answer, closedMs } = await stalled;
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.match(answer, /"detail":"Request body did not arrive within 0\.3 s/);
    assert.ok(closedMs >= 250 && closedMs < 3000, `closed after ${closedMs} ms`);
  }, { bodyTimeoutMs: 300 });
});

Deno.test("half-sent headers are answered 408 within the header timeout and the connection closed", async () => {
  await withTextCraft(async ({ port }) => {
    const { answer, closedMs } = await halfSend(port, "POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le", 5000);
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.ok(closedMs >= 250 && closedMs < 3000, `closed after ${closedMs} ms`);
  }, { headersTimeoutMs: 300 });
});

Deno.test("binding beyond loopback warns that the server accepts environments from the network", async () => {
  const warnings: string[] = [];
  const warn = (m: string) => warnings.push(m);
  const local = await serveTextCraft({ port: 0, tree, warn });
  await local.shutdown();
  assert.deepEqual(warnings, []);
  const wide = await serveTextCraft({ port: 0, hostname: "0.0.0.0", tree, warn, token: "a-key-of-16-chars" });
  await wide.shutdown();
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /bound to 0\.0\.0\.0, beyond loopback, so it accepts environments from the network/);
  assert.deepEqual(["127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost"].filter((h) => !isLoopback(h)), []);
  assert.deepEqual(["0.0.0.0", "::", "192.168.1.4", "example.com"].filter(isLoopback), []);
});
