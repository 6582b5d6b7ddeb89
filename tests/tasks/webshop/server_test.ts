// The WebShop server over AgentGym's WebShop protocol (in-process, loopback, port 0): routes and JSON shapes as
// agentenv-webshop's server answers them, the plumbing's guards (quota, body limit, key, origin, 404/405/422), and the
// oracle's episodes replayed through the server by Crucible's client with the rewards planned for them.
import assert from "node:assert/strict";
import { envClient } from "../../../tasks/mod.ts";
import type { GameServerOptions } from "../../../src/env/server/serve.ts";
import { generatedSource } from "../../../tasks/webshop/data.ts";
import { webshop } from "../../../tasks/webshop/mod.ts";
import { oracleEpisode } from "../../../tasks/webshop/oracle.ts";
import { serveWebShop, type WebShopSource } from "../../../tasks/webshop/server.ts";
import { fixtureWorld } from "./fixture.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const world = fixtureWorld();
const SOURCE: WebShopSource = {
  world,
  tasks: { count: world.goals.length, labels: world.goals.map((g) => ({ asin: g.asin, category: g.category })) },
};

async function withServer(
  body: (call: (method: string, path: string, b?: unknown) => Promise<{ status: number; body: Json }>) => Promise<void>,
  options: GameServerOptions = {},
  source = SOURCE,
) {
  const server = await serveWebShop(source, { port: 0, ...options });
  const call = async (method: string, path: string, b?: unknown) => {
    const init: RequestInit = { method };
    if (b !== undefined) init.body = typeof b === "string" ? b : JSON.stringify(b);
    if (b !== undefined) init.headers = { "content-type": "application/json" };
    const res = await fetch(`${server.url}${path}`, init);
    const text = await res.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch { /* plain text */ }
    return { status: res.status, body: parsed };
  };
  try {
    await body(call);
  } finally {
    await server.shutdown();
  }
}

Deno.test("AgentGym's WebShop routes and shapes: create, reset, observation, actions, step, buy, close", async () => {
  await withServer(async (call) => {
    assert.deepEqual(await call("GET", "/"), { status: 200, body: "ok" });
    // Upstream's client posts /create with no body and no content type.
    const created = await call("POST", "/create");
    assert.equal(created.status, 200);
    const id = created.body;
    assert.ok(Number.isSafeInteger(id) && id >= 0);
    const reset = await call("POST", "/reset", { env_idx: id, session_id: 3 });
    const start = "WebShop [SEP] Instruction: [SEP] Find me cotton running socks, and price lower than 50.00 " +
      "dollars [SEP] Search";
    assert.deepEqual(reset, { status: 200, body: [start, null] });
    assert.deepEqual((await call("GET", `/observation?env_idx=${id}`)).body, start);
    assert.deepEqual((await call("GET", `/available_actions?env_idx=${id}`)).body, {
      has_search_bar: true,
      clickables: ["search"],
    });
    assert.equal(
      (await call("GET", `/instruction_text?env_idx=${id}`)).body,
      "Instruction: Find me cotton " +
        "running socks, and price lower than 50.00 dollars",
    );
    const step = await call("POST", "/step", { env_idx: id, action: "search[cotton socks]" });
    assert.equal(step.status, 200);
    assert.deepEqual(Object.keys(step.body), ["state", "reward", "done", "info"]);
    assert.equal(step.body.info, null);
    assert.match(step.body.state, /Page 1 \(Total results: 1\) \[SEP\] Next > \[SEP\] B00SOCK003/);
    await call("POST", "/step", { env_idx: id, action: "click[b00sock003]" });
    const buy = await call("POST", "/step", { env_idx: id, action: "click[buy now]" });
    assert.equal(buy.body.reward, 1);
    assert.equal(buy.body.done, true);
    assert.equal(buy.body.info.asin, "B00SOCK003");
    assert.equal(buy.body.info.r_type, 1);
    // A session_id past the goals wraps around; none draws a goal by weight.
    assert.equal((await call("POST", "/reset", { env_idx: id, session_id: 8 })).body[0], start);
    assert.match((await call("POST", "/reset", { env_idx: id })).body[0], /^WebShop \[SEP\] Instruction: \[SEP\] Find/);
    assert.deepEqual(await call("POST", "/close", { env_idx: id }), { status: 200, body: true });
    assert.deepEqual(await call("POST", "/close", { env_idx: id }), { status: 200, body: false });
    const gone = await call("POST", "/step", { env_idx: id, action: "search[x]" });
    assert.equal(gone.status, 404);
    assert.match(gone.body.detail, new RegExp(`^The id ${id} is not valid`));
    assert.deepEqual((await call("GET", "/tasks")).body.count, 5);
  });
});

Deno.test("requests that do not fit: 422 with the field, 404 and 405 as FastAPI answers them, no stack traces", async () => {
  await withServer(async (call) => {
    const missing = await call("POST", "/step", { action: "search[x]" });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.detail[0].loc, ["body", "env_idx"]);
    assert.equal((await call("GET", "/observation")).status, 422);
    assert.equal((await call("GET", "/observation?env_idx=abc")).status, 422);
    assert.deepEqual(await call("GET", "/state?env_idx=1"), { status: 404, body: { detail: "Not Found" } });
    assert.deepEqual(await call("GET", "/list_envs"), { status: 404, body: { detail: "Not Found" } });
    assert.deepEqual(await call("GET", "/step"), { status: 405, body: { detail: "Method Not Allowed" } });
    const broken = await call("POST", "/step", "{not json");
    assert.equal(broken.status, 422);
    assert.doesNotMatch(JSON.stringify(broken.body), /at \w+ \(|\.ts:\d+/);
  });
});

Deno.test("the game server's guards: a per-client quota, the body limit, the key, other origins", async () => {
  await withServer(async (call) => {
    assert.equal((await call("POST", "/create")).status, 200);
    assert.equal((await call("POST", "/create")).status, 200);
    const third = await call("POST", "/create");
    assert.equal(third.status, 429);
    assert.match(third.body.detail, /Too many live environments for this client \(2 of 2 per client\)/);
    const big = await call("POST", "/step", { env_idx: 1, action: "x".repeat(300) });
    assert.equal(big.status, 413);
  }, { maxEnvsPerClient: 2, maxBodyBytes: 200 });
  const key = "k".repeat(16);
  const server = await serveWebShop(SOURCE, { port: 0, token: key });
  try {
    assert.equal(
      (await fetch(`${server.url}/create`, { method: "POST" }).then(async (r) => (await r.body?.cancel(), r)))
        .status,
      401,
    );
    const ok = await fetch(`${server.url}/create`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
    const cross = await fetch(`${server.url}/create`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, origin: "https://evil.example" },
    });
    assert.equal(cross.status, 403);
    await cross.body?.cancel();
  } finally {
    await server.shutdown();
  }
});

Deno.test("the oracle's episodes replay through the server with the rewards planned for them (generated test goals)", async () => {
  const source = generatedSource();
  const server = await serveWebShop(source, { port: 0 });
  const client = envClient("webshop", { urls: [server.url], retries: 0 });
  try {
    const test = source.tasks.splits!.test;
    assert.ok(test.length >= 80, `${test.length} held-out goals`);
    let total = 0;
    for (const index of test) {
      const plan = oracleEpisode(source.world, index);
      const env = await client.create({ parseAction: webshop.parseAction });
      await env.reset(index);
      let last = { reward: 0, done: false };
      for (const reply of plan.replies) last = await env.step(reply);
      await env.close();
      assert.equal(last.reward, plan.reward, `goal ${index}`);
      assert.equal(last.done, true, `goal ${index}`);
      total += last.reward;
    }
    // Recorded in docs/webshop.md: the oracle solves every held-out generated goal.
    assert.equal(total / test.length, 1);
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("the invalid-action penalty: −p·r before a purchase, WebShop's own reward on it, none at p = 0", async () => {
  const play = async (p: number | undefined) => {
    const server = await serveWebShop(SOURCE, { port: 0 }, p === undefined ? undefined : { invalidPenalty: p });
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json" },
      });
    const step = async (id: number, action: string) =>
      (await (await post("/step", { env_idx: id, action })).json()).reward as number;
    try {
      const id = await (await fetch(`${server.url}/create`, { method: "POST" })).json();
      await (await post("/reset", { env_idx: id, session_id: 3 })).body?.cancel();
      const r = [];
      for (const a of ["search[cotton socks]", "click[b00shoe009]", "click[b00sock003]", "jump", "click[buy now]"]) {
        r.push(await step(id, a));
      }
      // A reset forgets the count.
      await (await post("/reset", { env_idx: id, session_id: 3 })).body?.cancel();
      r.push(await step(id, "search[cotton socks]"));
      return r;
    } finally {
      await server.shutdown();
    }
  };
  // The worked example of server.ts's WebShopShaping, with a second invalid action before the purchase.
  assert.deepEqual(await play(0.1), [0, -0.1, -0.1, -0.2, 1, 0]);
  assert.deepEqual(await play(0), [0, 0, 0, 0, 1, 0]);
  assert.deepEqual(await play(undefined), [0, 0, 0, 0, 1, 0]);
  assert.deepEqual(webshop.embeddedOnly!(webshop.parseOptions!({ invalid_penalty: 0.1 })), ["invalid_penalty"]);
  assert.deepEqual(webshop.embeddedOnly!(webshop.parseOptions!({})), []);
  assert.throws(() => webshop.parseOptions!({ invalid_penalty: 1 }), /task_options\.invalid_penalty/);
});
