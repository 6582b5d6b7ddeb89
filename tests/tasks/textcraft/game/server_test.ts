import assert from "node:assert/strict";
import { get, notValid, post, tree, withTextCraft } from "../../../env/helpers.ts";

Deno.test("routes answer upstream's shapes: create resets to its own id, observation is a bare string", async () => {
  await withTextCraft(async ({ url }) => {
    assert.deepEqual(await get(`${url}/`), { status: 200, body: "This is environment TextCraft." });
    const a = (await post(`${url}/create`, { commands: null, goal: "minecraft:stick", minecraft_dir: "x" })).body;
    const b = (await post(`${url}/create`, {})).body as Record<string, unknown>;
    assert.deepEqual(Object.keys(a as object), ["id", "observation", "done", "reward"]);
    const id = (a as { id: number }).id;
    assert.ok(Number.isSafeInteger(id) && Number.isSafeInteger(b.id) && id !== b.id);
    // Environment a reset to b's id shows what b got at creation (its own id, mod 544); /observation is the bare
    // string.
    const reset = (await post(`${url}/reset`, { id, data_idx: b.id })).body as Record<string, unknown>;
    assert.deepEqual(reset, { id, observation: b.observation, done: false, reward: 0 });
    assert.deepEqual(await get(`${url}/observation?id=${id}`), { status: 200, body: b.observation });
    const goal = tree.goals[(b.id as number) % 544].id.slice("minecraft:".length).replaceAll("_", " ");
    assert.ok((b.observation as string).endsWith(`\n\nGoal: craft ${goal}.`));
    // data_idx is taken mod 544 the Python way, and a numeric string is coerced.
    const last = (await post(`${url}/reset`, { id: b.id, data_idx: "543" })).body as { observation: string };
    for (const idx of [-1, 544 + 543]) {
      assert.equal(
        ((await post(`${url}/reset`, { id: b.id, data_idx: idx })).body as typeof last).observation,
        last.observation,
      );
    }
    const first = (await post(`${url}/reset`, { id: b.id, data_idx: 0 })).body as { observation: string };
    assert.notEqual(last.observation, first.observation);
    const step = (await post(`${url}/step`, { id: b.id, action: "inventory" })).body;
    assert.deepEqual(step, { observation: "Inventory: You are not carrying anything.", reward: 0, done: false });
    assert.deepEqual((await get(`${url}/detail?id=${b.id}`)).body, {
      observation: "Inventory: You are not carrying anything.",
      done: false,
      reward: 0,
      deleted: false,
    });
  });
});

Deno.test("errors: unknown ids, null data_idx, missing routes, commands/goal 500, close twice", async () => {
  await withTextCraft(async ({ url }) => {
    const { id } = (await post(`${url}/create`, {})).body as { id: number };
    const invalid = { status: 200, body: notValid(7) };
    assert.deepEqual(await post(`${url}/step`, { id: 7, action: "inventory" }), invalid);
    assert.deepEqual(await post(`${url}/reset`, { id: 7 }), invalid);
    assert.deepEqual(await get(`${url}/observation?id=7`), invalid);
    assert.deepEqual(await get(`${url}/detail?id=7`), invalid);
    assert.deepEqual(await post(`${url}/reset`, { id, data_idx: null }), {
      status: 200,
      body: { error: "unsupported operand type(s) for %: 'NoneType' and 'int'" },
    });
    assert.deepEqual(await get(`${url}/commands?id=${id}`), { status: 500, body: "Internal Server Error" });
    assert.deepEqual(await get(`${url}/goal?id=${id}`), { status: 500, body: "Internal Server Error" });
    assert.deepEqual(await get(`${url}/nope`), { status: 404, body: { detail: "Not Found" } });
    assert.deepEqual(await get(`${url}/step`), { status: 405, body: { detail: "Method Not Allowed" } });
    assert.deepEqual(await post(`${url}/close`, { id }), { status: 200, body: true });
    assert.deepEqual(await post(`${url}/close`, { id }), { status: 200, body: false });
    assert.deepEqual(await post(`${url}/step`, { id, action: "x" }), { status: 200, body: notValid(id) });
    const big = "123456789012345678901234567890";
    assert.deepEqual(await post(`${url}/step`, `{"id": ${big}, "action": ""}`, true), {
      status: 200,
      body: notValid(big),
    });
  });
});

Deno.test("bad bodies get FastAPI-style 422s, oversized bodies 413, never a crash", async () => {
  await withTextCraft(async ({ url }) => {
    const r1 = await post(`${url}/step`, { action: 5 });
    assert.equal(r1.status, 422);
    const detail = (r1.body as { detail: { type: string; loc: string[] }[] }).detail;
    assert.deepEqual(detail.map((d) => [d.type, d.loc.join(".")]), [["missing", "body.id"], [
      "string_type",
      "body.action",
    ]]);
    const cases: [unknown, string][] = [
      [{ id: 1.5, action: "" }, "int_from_float"],
      [{ id: "abc", action: "" }, "int_parsing"],
      [{ id: null, action: "" }, "int_type"],
      [[1, 2], "model_attributes_type"],
    ];
    for (const [body, type] of cases) {
      const r = await post(`${url}/step`, body);
      assert.equal(r.status, 422, JSON.stringify(body));
      assert.equal((r.body as { detail: { type: string }[] }).detail[0].type, type);
    }
    assert.equal((await post(`${url}/step`, "{not json", true)).status, 422);
    assert.equal((await post(`${url}/create`, "", true)).status, 422);
    assert.equal((await get(`${url}/detail`)).status, 422);
    assert.equal((await post(`${url}/step`, { id: 0, action: "x".repeat(70_000) })).status, 413);
    assert.deepEqual(await get(`${url}/`), { status: 200, body: "This is environment TextCraft." });
  }, { maxBodyBytes: 65536 });
});

Deno.test("the cap on live environments gives a clear error and frees up on close", async () => {
  await withTextCraft(async ({ url }) => {
    const { id } = (await post(`${url}/create`, {})).body as { id: number };
    await post(`${url}/create`, {});
    const full = await post(`${url}/create`, {});
    assert.deepEqual(full.body, { error: "Too many live environments (2 of 2); close some with /close first." });
    await post(`${url}/close`, { id });
    assert.ok(Number.isSafeInteger(((await post(`${url}/create`, {})).body as { id: number }).id));
  }, { maxEnvs: 2 });
});

Deno.test("concurrent requests on different environments never interfere", async () => {
  await withTextCraft(async ({ url }) => {
    const script = [
      "get 1 oak logs",
      "craft 4 oak planks using 1 oak logs",
      "inventory",
      "craft 4 stick using 2 oak planks",
    ];
    const play = async (i: number) => {
      const { id } = (await post(`${url}/create`, {})).body as { id: number };
      const first = ((await post(`${url}/reset`, { id, data_idx: i * 7 })).body as { observation: string }).observation;
      const seen = [first];
      for (const action of script) {
        seen.push(((await post(`${url}/step`, { id, action })).body as { observation: string }).observation);
      }
      return seen;
    };
    const together = await Promise.all(Array.from({ length: 40 }, (_, i) => play(i)));
    for (let i = 0; i < 40; i += 13) assert.deepEqual(together[i], await play(i));
    assert.equal(together[5][3], "Inventory: [oak planks] (4) ");
  });
});
