// docs/own-environment.md's example holds: its task file, written out as the guide shows it, type-checks against the
// Task interface (so a member the interface no longer has, or lacks, fails here), and plays an episode through the one
// episode loop against a server that speaks the protocol it names, solving it as its success rule says.
import assert from "node:assert/strict";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { EnvClient } from "../../src/env/client.ts";
import type { Task } from "../../src/task/task.ts";
import { fakeServer, json, playScripts } from "../env/helpers.ts";
import { runDeno } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url);
const guide = await Deno.readTextFile(new URL("docs/own-environment.md", ROOT));
const taskFile = [...guide.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1])
  .find((b) => b.startsWith("// tasks/mygame.ts\n"));

/** The guide's task written to a temporary file, its imports pointing at src/. */
async function writtenOut(dir: string): Promise<string> {
  const path = `${dir}/mygame.ts`;
  await Deno.writeTextFile(path, taskFile!.replaceAll('"../src/', `"${new URL("src/", ROOT).href}`));
  return path;
}

Deno.test("the guide's task type-checks as a Task and plays an episode on a server of its protocol", async () => {
  assert.ok(taskFile, "the guide shows the task's file, opening with // tasks/mygame.ts");
  const dir = await Deno.makeTempDir();
  const server = fakeServer((path, body) => {
    if (path === "/create") return json({ id: 0 });
    if (path === "/reset") return json({ observation: "A maze. The exit is ahead.", reward: 0, score: 0, done: false });
    if (path === "/close") return json(true);
    const forward = (body as { action?: string }).action === "move forward";
    // BabyAI's protocol: the episode's reward is the running score.
    return json({
      observation: forward ? "You are out." : "A wall.",
      reward: 0,
      score: forward ? 1 : 0,
      done: forward,
    });
  });
  try {
    const path = await writtenOut(dir);
    const checked = await runDeno(["check", "--lock=tests/deno.lock", path]);
    assert.equal(checked.code, 0, checked.err);
    const { mygame } = await import(path) as { mygame: Task };
    assert.equal(mygame.name, "mygame");
    const replies = ["Thought: a wall. Action: turn left", "Thought: the exit is ahead. Action: move forward"];
    const tok = wordTokenizer([...replies, "A maze. The exit is ahead. You are out."]);
    const client = new EnvClient(mygame.adapter, { urls: [server.url], retries: 0 });
    try {
      const [episode] = await playScripts(client, mygame, tok, [{ index: 0, replies }], mygame.maxRounds);
      assert.equal(episode.finish, "done", JSON.stringify(episode.turns));
      assert.equal(episode.turns.length, 2);
      assert.ok(mygame.isSuccess(episode.reward!), `reward ${episode.reward} counts as solved`);
      assert.deepEqual(
        server.requests.filter((r) => r.path === "/step").map((r) => (r.body as { action: string }).action),
        [
          "turn left",
          "move forward",
        ],
      );
    } finally {
      client.close();
    }
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
