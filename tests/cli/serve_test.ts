// `deno task serve textcraft` as a user runs it (a subprocess): the warning on stderr when bound beyond loopback (with
// the key that binding needs), and the flags reaching the server (a tiny idle time reaps an environment). Requests go
// to loopback only.
import assert from "node:assert/strict";
import { end, firstLine, spawnCli } from "../subprocess.ts";

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
