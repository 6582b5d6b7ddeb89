// What the game servers refuse beyond a missing key (issue 59), over HTTP on loopback: an environment belongs to the
// key that made it (another key can neither read, step, reset nor close it; it is answered as an id never made), and
// a request whose Host the server does not answer to gets a 421 (a DNS-rebinding page calls a loopback server by
// the attacker's name), while the loopback names, the bound address and `allowedHosts` are served. The Host rule is
// access.ts's, which serve-model (tests/serve/access_test.ts) and the play page share. No GPU.
import assert from "node:assert/strict";
import { hostName, hostRefusal, machineNames, servedNames } from "../../src/env/server/access.ts";
import { generatedSource } from "../../tasks/webshop/data.ts";
import { serveWebShop } from "../../tasks/webshop/server.ts";
import { notValid, withTextCraft } from "./helpers.ts";

const K1 = "first-client-key-0123456789", K2 = "second-client-key-987654321";

/** A JSON request with key `key`: status and parsed body. */
async function call(url: string, key: string, method: string, body?: unknown) {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** A raw HTTP/1.1 GET of `path` with Host `host` (fetch always sends the URL's own): the status and the body. */
async function withHost(port: number, host: string, path = "/", extra = ""): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`),
  );
  let text = "";
  const buf = new Uint8Array(4096);
  for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  conn.close();
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), body: text.slice(text.indexOf("\r\n\r\n") + 4) };
}

Deno.test("TextCraft: another key cannot read, step, reset or close an environment, even with its id", async () => {
  await withTextCraft(async ({ url }) => {
    const made = await call(`${url}/create`, K1, "POST", {});
    const id = made.body.id as number;
    const other = {
      observation: await call(`${url}/observation?id=${id}`, K2, "GET"),
      detail: await call(`${url}/detail?id=${id}`, K2, "GET"),
      step: await call(`${url}/step`, K2, "POST", { id, action: "inventory" }),
      reset: await call(`${url}/reset`, K2, "POST", { id, data_idx: 0 }),
    };
    for (const [route, r] of Object.entries(other)) assert.deepEqual(r.body, notValid(id), route);
    assert.deepEqual(await call(`${url}/close`, K2, "POST", { id }), { status: 200, body: false });
    // Its own key still has it, untouched.
    const mine = await call(`${url}/observation?id=${id}`, K1, "GET");
    assert.equal(mine.body, made.body.observation);
    assert.deepEqual(await call(`${url}/close`, K1, "POST", { id }), { status: 200, body: true });
  }, { token: [K1, K2] });
});

Deno.test("WebShop: another key's environment is a 404 on every route; its own key keeps it", async () => {
  const server = await serveWebShop(generatedSource(), { port: 0, token: [K1, K2] });
  try {
    const id = (await call(`${server.url}/create`, K1, "POST")).body as number;
    const routes: [string, string, unknown?][] = [
      ["GET", `/observation?env_idx=${id}`],
      ["GET", `/available_actions?env_idx=${id}`],
      ["GET", `/instruction_text?env_idx=${id}`],
      ["POST", "/step", { env_idx: id, action: "search[shoes]" }],
      ["POST", "/reset", { env_idx: id, session_id: 1 }],
    ];
    for (const [method, path, body] of routes) {
      const r = await call(`${server.url}${path}`, K2, method, body);
      assert.equal(r.status, 404, path);
      assert.match(r.body.detail, new RegExp(`The id ${id} is not valid`), path);
    }
    assert.deepEqual((await call(`${server.url}/close`, K2, "POST", { env_idx: id })).body, false);
    assert.equal((await call(`${server.url}/observation?env_idx=${id}`, K1, "GET")).status, 200);
    assert.deepEqual((await call(`${server.url}/close`, K1, "POST", { env_idx: id })).body, true);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a Host the game server does not answer to gets a 421 naming --allowed-host; its own names are served", async () => {
  await withTextCraft(async ({ port }) => {
    const evil = await withHost(port, `rebind.attacker.example:${port}`);
    assert.equal(evil.status, 421);
    assert.match(JSON.parse(evil.body).detail, /Host "rebind\.attacker\.example:\d+" is not a name this server/);
    assert.match(JSON.parse(evil.body).detail, /--allowed-host NAME/);
    for (
      const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "LOCALHOST", `crucible.lan:${port}`]
    ) {
      assert.equal((await withHost(port, host)).status, 200, host);
    }
    assert.equal((await withHost(port, "crucible.lan.attacker.example")).status, 421);
  }, { allowedHosts: ["crucible.lan"] });
  // Bound to every interface: the machine's own names too; the key is asked only of a Host it answers to.
  await withTextCraft(async ({ port }) => {
    const names = machineNames();
    assert.ok(names.length > 0);
    for (const name of names) {
      const host = name.includes(":") ? `[${name}]:${port}` : `${name}:${port}`;
      assert.equal((await withHost(port, host)).status, 401, host);
    }
    assert.equal((await withHost(port, `evil.example:${port}`, "/", `Authorization: Bearer ${K1}\r\n`)).status, 421);
    assert.equal((await withHost(port, `127.0.0.1:${port}`, "/", `Authorization: Bearer ${K1}\r\n`)).status, 200);
  }, { hostname: "0.0.0.0", token: K1, warn: () => {} });
});

Deno.test("the Host rule: loopback names, the bound address, added names; ports and brackets ignored", () => {
  assert.deepEqual(servedNames("127.0.0.1"), ["localhost", "127.0.0.1", "::1"]);
  assert.deepEqual(servedNames("192.168.1.4", ["Crucible.LAN"]), [
    "localhost",
    "127.0.0.1",
    "::1",
    "192.168.1.4",
    "crucible.lan",
  ]);
  assert.deepEqual(["a.b:80", "[::1]:8000", "::1", "X.Y"].map(hostName), ["a.b", "::1", "::1", "x.y"]);
  const hosts = new Set(servedNames("192.168.1.4"));
  const req = (host?: string) => new Request("http://x/", host === undefined ? {} : { headers: { host } });
  assert.equal(hostRefusal(req("192.168.1.4:36001"), hosts), undefined);
  assert.equal(hostRefusal(req("127.5.6.7"), hosts), undefined, "all of 127.0.0.0/8 is loopback");
  assert.equal(hostRefusal(req(), hosts), undefined, "no Host: not a browser");
  assert.equal(hostRefusal(req("192.168.1.5"), hosts)?.status, 421);
  assert.equal(hostRefusal(req("localhost.attacker.example"), hosts)?.code, "host_not_allowed");
});
