// `deno task serve textcraft` as a user runs it (a subprocess): the warning on stderr when bound beyond loopback (with
// the key that binding needs), and the flags reaching the server (a tiny idle time reaps an environment). Requests go
// to loopback only. The tasks it serves are the registry's tasks with a `serve` hook, each checking its own options.
import assert from "node:assert/strict";
import { main, servedTasks } from "../../src/cli/serve.ts";
import { TASKS } from "../../tasks/mod.ts";
import { end, firstLine, spawnCli } from "../subprocess.ts";

Deno.test("serve serves the registry's tasks that have a server, and refuses the rest with the reason", async () => {
  assert.deepEqual(servedTasks(), ["textcraft", "webshop", "bfcl"]);
  assert.deepEqual(servedTasks(), Object.values(TASKS).filter((t) => t.serve).map((t) => t.name));
  await assert.rejects(main(["sciworld"]), /sciworld has no server in Crucible: run AgentGym's own sciworld server/);
  await assert.rejects(main(["nosuch"]), /Unknown task "nosuch"; expected one of textcraft, /);
  await assert.rejects(main([]), /Name one task to serve \(textcraft, webshop, bfcl\)/);
  await assert.rejects(main(["textcraft", "--data-dir", "x"]), /Unknown TextCraft option "task_options\.data_dir"/);
  await assert.rejects(main(["webshop", "--goals", "human"]), /--goals chooses among a --data-dir's goals/);
  await assert.rejects(main(["webshop", "--data-dir", "x", "--goals", "all"]), /WebShop option "task_options\.goals"/);
  await assert.rejects(main(["bfcl", "--task-option", "rewards=nope"]), /task_options\.rewards/);
  await assert.rejects(main(["bfcl", "--task-option", "rewards"]), /--task-option takes KEY=VALUE/);
  await assert.rejects(main(["textcraft", "--port", "70000"]), /--port must be an integer in \[0, 65535\]/);
});

Deno.test("serve bfcl on port 0 goes through the task's hook and says what it serves", async () => {
  const p = spawnCli(["serve", "bfcl", "--port", "0", "--task-option", "generated_classes=[MathAPI]"]);
  try {
    const out = await firstLine(p, "out");
    assert.match(out, /^BFCL listening on http:\/\/127\.0\.0\.1:\d+ \(Crucible's generated tasks \(classes MathAPI;/);
  } finally {
    await end(p);
  }
});

const KEY = "serve-test-key-0123456789";

Deno.test("serve --host 0.0.0.0 warns on stderr and the flags reach the server", async () => {
  const p = spawnCli(
    ["serve", "textcraft", "--host", "0.0.0.0", "--port", "0"].concat(
      ["--idle-minutes", "0.005", "--body-timeout-s", "2", "--header-timeout-s", "2", "--max-envs", "8"],
      ["--token", KEY],
    ),
  );
  try {
    const out = await firstLine(p, "out");
    const port = Number(/listening on http:\/\/0\.0\.0\.0:(\d+)/.exec(out)?.[1]);
    assert.ok(port > 0, out);
    assert.match(
      await firstLine(p, "err"),
      /^warning: TextCraft is bound to 0\.0\.0\.0, beyond loopback, so it accepts environments from/,
    );
    const url = `http://127.0.0.1:${port}`;
    const post = async (path: string, body: unknown) =>
      await (await fetch(`${url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
        body: JSON.stringify(body),
      })).json();
    const { id } = await post("/create", {});
    await new Promise((r) => setTimeout(r, 600));
    const step = await post("/step", { id, action: "inventory" });
    assert.equal((await fetch(`${url}/`)).status, 401, "a request without the key is refused");
    assert.match(step.error, /^The id \d+ is not valid\. .*unused for 0\.3 s and reaped/);
  } finally {
    await end(p);
  }
});
