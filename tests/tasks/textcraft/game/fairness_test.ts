// The TextCraft server shares fairly and can ask for a key (issue 32): a per-client quota on live environments, a key
// every request must carry (and required beyond loopback), environments that touches cannot keep forever, 405 for a
// method it does not serve. Servers bind loopback only.
import assert from "node:assert/strict";
import { envClient } from "../../../../tasks/mod.ts";
import { EnvTable } from "../../../../src/env/server/envs.ts";
import { serveTextCraft, textCraftHandler } from "../../../../tasks/textcraft/game/server.ts";
import { tree, withTextCraft } from "../../../env/helpers.ts";

const json = { "content-type": "application/json" };
const create = (headers: Record<string, string> = {}) =>
  new Request("http://127.0.0.1:1/create", { method: "POST", headers: { ...json, ...headers }, body: "{}" });

Deno.test("one client holding its quota does not starve another address", async () => {
  const handle = textCraftHandler(tree, { maxEnvs: 100, maxEnvsPerClient: 3 });
  const hog = { address: "10.0.0.1" }, other = { address: "10.0.0.2" };
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push((await (await handle(create(), hog)).json()).id);
  assert.ok(ids.every(Number.isSafeInteger));
  const refused = await (await handle(create(), hog)).json();
  assert.match(refused.error, /^Too many live environments for this client \(3 of 3 per client\)/);
  assert.ok(Number.isSafeInteger((await (await handle(create(), other)).json()).id));
  // Closing one frees the hog's quota again.
  const close = new Request("http://127.0.0.1:1/close", { method: "POST", headers: json, body: `{"id":${ids[0]}}` });
  assert.equal(await (await handle(close, hog)).json(), true);
  assert.ok(Number.isSafeInteger((await (await handle(create(), hog)).json()).id));
});

Deno.test("a server with a key refuses requests without it; the client sends it", async () => {
  const key = "k".repeat(12) + "-sixteen";
  const handle = textCraftHandler(tree, { token: key });
  const none = await handle(create(), { address: "127.0.0.1" });
  assert.equal(none.status, 401);
  assert.match((await none.json()).detail, /needs a key: send the header Authorization: Bearer KEY/);
  const wrong = await handle(create({ authorization: "Bearer " + "x".repeat(20) }), { address: "127.0.0.1" });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const right = await handle(create({ authorization: `Bearer ${key}` }), { address: "127.0.0.1" });
  assert.equal(right.status, 200);
  await right.body?.cancel();
  await withTextCraft(async (server) => {
    const client = envClient("textcraft", { urls: [server.url], token: key });
    const session = await client.create({});
    await session.close();
    client.close();
    const bare = envClient("textcraft", { urls: [server.url], retries: 0 });
    await assert.rejects(bare.create({}), /HTTP 401/);
    bare.close();
  }, { token: key });
});

Deno.test("binding beyond loopback without a key is refused before anything listens", async () => {
  await assert.rejects(
    serveTextCraft({ port: 0, hostname: "0.0.0.0", tree, warn: () => {} }),
    /beyond loopback, needs a key[\s\S]*--token KEY or set CRUCIBLE_ENV_TOKEN/,
  );
  await assert.rejects(serveTextCraft({ port: 0, tree, token: "short" }), /at least 16 characters/);
});

Deno.test("touching an environment does not keep it past the age limit", () => {
  let now = 0;
  const table = new EnvTable<string>({ idleMs: 100, maxAgeMs: 1000, now: () => now });
  const kept = table.add("a", "hog");
  assert.equal(table.owned("hog"), 1);
  for (now = 50; now < 1000; now += 50) assert.equal(table.get(kept), "a");
  now = 1000;
  assert.equal(table.get(kept), undefined);
  assert.equal(table.owned("hog"), 0);
  assert.throws(() => new EnvTable({ idleMs: 1, maxAgeMs: -1 }), RangeError);
});

Deno.test("TRACE gets 405 with a JSON detail, not a 500", async () => {
  await withTextCraft(async (server) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    await conn.write(new TextEncoder().encode("TRACE / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
    let text = "";
    const buf = new Uint8Array(4096);
    for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
    assert.match(text, /^HTTP\/1\.1 405 /);
    assert.match(text, /Method TRACE is not served; TextCraft answers GET and POST/);
  });
});
