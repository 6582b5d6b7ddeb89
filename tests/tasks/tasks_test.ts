import assert from "node:assert/strict";
import { lastAction } from "../../tasks/alfworld.ts";
import { ADAPTERS, getTask, TASKS } from "../../tasks/mod.ts";
import { sqlAction } from "../../tasks/sqlgym.ts";
import { afterAction, loadPrompt } from "../../src/task/task.ts";

Deno.test("every task names its environment's adapter, and the environments are the tasks' adapters", () => {
  assert.deepEqual(Object.keys(TASKS).sort(), Object.keys(ADAPTERS).sort());
  for (const [name, task] of Object.entries(TASKS)) {
    assert.equal(task.name, name);
    assert.equal(task.adapter.name, name);
    assert.equal(ADAPTERS[name], task.adapter);
    assert.ok(task.prompt.user.length > 200, name);
    assert.ok(task.prompt.assistant.length > 0, name);
    assert.ok(Number.isInteger(task.maxRounds) && task.maxRounds > 0, name);
  }
  assert.throws(() => getTask("nethack"), /Unknown task "nethack"/);
  assert.ok(TASKS.sciworld.isSuccess(100) && !TASKS.sciworld.isSuccess(1));
});

Deno.test("upstream's action rules for the other servers", () => {
  assert.equal(afterAction("Thought: hm\nAction: turn left </s>"), "turn left");
  assert.equal(afterAction("Action: go to desk</s>"), "go to des");
  assert.equal(afterAction("move forward"), "move forward");
  assert.equal(afterAction("Action: a Action: b"), "a");
  assert.equal(lastAction("Thought: x\nAction: a\nAction:\nclick[Buy Now] "), "click[Buy Now]");
  assert.equal(sqlAction("Thought: t\nAction: ```sql\nSELECT 1;\n```"), "SELECT 1;");
  assert.equal(sqlAction("SELECT 2"), "SELECT 2");
  assert.deepEqual(TASKS.searchqa.parseAction("<search>q</search>"), { action: "<search>q</search>" });
});

Deno.test("a prompt file replaces the wording: JSON with both messages, or plain text for the user's", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fallback = TASKS.textcraft.prompt;
    await Deno.writeTextFile(`${dir}/p.txt`, "Exact upstream text.\n\n");
    assert.deepEqual(await loadPrompt(`${dir}/p.txt`, fallback), {
      user: "Exact upstream text.\n\n",
      assistant: fallback.assistant,
    });
    await Deno.writeTextFile(`${dir}/p.json`, JSON.stringify({ user: "u", assistant: "a" }));
    assert.deepEqual(await loadPrompt(`${dir}/p.json`, fallback), { user: "u", assistant: "a" });
    await Deno.writeTextFile(`${dir}/bad.json`, '{"user": 3}');
    await assert.rejects(loadPrompt(`${dir}/bad.json`, fallback), SyntaxError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
