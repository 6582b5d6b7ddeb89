// A run's environment played in-process (RunOptions.inProcessEnv, the studio page's): the task's embedded server's
// handler called with no HTTP answers every step as the embedded server does over HTTP, shaped rewards included;
// and it is refused, naming the key, where it cannot hold (external servers, synthetic worlds).
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { IN_PROCESS_HOST, openEnv } from "../../src/train/setup.ts";

async function play(inProcess: boolean, overrides: string[]) {
  const c = resolveConfig({ text: "task: textcraft", name: "test" }, overrides);
  const env = await openEnv(c, { inProcess });
  const seen: unknown[] = [];
  try {
    const s = await env.client.create({ parseAction: env.task.parseAction });
    seen.push(await s.reset(3)); // craft birch planks
    for (
      const action of [
        "craft 4 birch planks using 1 birch logs",
        "craft 4 birch planks using 1 birch logs",
        "get 1 birch logs",
        "craft 4 birch planks using 1 birch logs",
      ]
    ) {
      seen.push(await s.step(`Thought: next.\n\nAction:\n${action}`));
    }
    await s.close();
    return { seen, urls: env.client.transport.health().map((h) => h.url) };
  } finally {
    await env.close();
  }
}

Deno.test("the in-process game answers as the embedded server does over HTTP, shaped rewards too", async () => {
  const rewards: number[][] = [];
  for (const overrides of [[], ["task_options.repeat_penalty=0.05"]]) {
    const http = await play(false, overrides), inProcess = await play(true, overrides);
    assert.deepEqual(inProcess.seen, http.seen);
    rewards.push(inProcess.seen.slice(1).map((r) => (r as { reward: number }).reward));
    assert.match(http.urls[0], /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(inProcess.urls, [`http://${IN_PROCESS_HOST}`]);
  }
  // The goal is crafted on the last step either way; the shaped game takes the penalty for the refused craft repeated
  // (a craft without its logs; getting any base item is allowed).
  assert.deepEqual(rewards, [[0, 0, 0, 1], [0, -0.05, -0.05, 1]]);
});

Deno.test("the in-process game is refused with external servers and with synthetic worlds, naming the key", async () => {
  await assert.rejects(play(true, ['env.urls=["http://127.0.0.1:36001"]']), /^RangeError: env\.urls \(--env-url\)/);
  await assert.rejects(
    play(true, ["data.synthetic_prompts.share=0.5"]),
    /data\.synthetic_prompts\.share=0\.5 plays synthetic worlds on an embedded server over HTTP/,
  );
});
