// The tests' one runner of Deno subprocesses: what a command printed reaches the right field, extra environment
// variables reach the command, and a command that exits before the line a test waits for fails with what it printed.
import assert from "node:assert/strict";
import { end, firstLine, runCli, runDeno, spawnCli } from "./subprocess.ts";

Deno.test("runCli and runDeno keep stdout, stderr, the exit code and the environment apart", async () => {
  const bad = await runCli(["no-such-command"]);
  assert.equal(bad.code, 2);
  assert.equal(bad.signal, null);
  assert.equal(bad.out, "");
  assert.match(bad.err, /Unknown command "no-such-command"/);
  const env = await runDeno(["eval", "console.log(Deno.env.get('CRUCIBLE_T')); console.error(Deno.cwd())"], {
    env: { CRUCIBLE_T: "seen" },
    cwd: "/",
  });
  assert.equal(env.code, 0, env.err);
  assert.equal(env.out, "seen\n");
  assert.equal(env.err, "/\n");
});

Deno.test("spawnCli's firstLine waits for a line and fails with the output where the command exits first", async () => {
  const bad = spawnCli(["no-such-command"]);
  await assert.rejects(firstLine(bad, "out"), /exited before a line on stdout: error: Unknown command/);
  assert.equal((await bad.done).code, 2);
  const p = spawnCli(["serve", "textcraft", "--port", "0"]);
  try {
    assert.match(await firstLine(p, "out"), /^TextCraft listening on http:\/\/\S+$/);
  } finally {
    const s = await end(p);
    assert.notEqual(s.code, 0, "serve runs until it is stopped");
  }
});
