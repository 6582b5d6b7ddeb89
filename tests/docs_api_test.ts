// The API reference from the code: `deno doc --lint mod.ts` passes (every export documented, no type of an export's
// signature left private), and `deno doc --html` (what `deno task docs` runs) writes pages for mod.ts's exports.
import assert from "node:assert/strict";
import { runDeno } from "./subprocess.ts";

Deno.test("deno doc --lint mod.ts finds nothing undocumented and no private type in the public API", async () => {
  const r = await runDeno(["doc", "--lint", "mod.ts"], { env: { NO_COLOR: "1" } });
  const errors = [...r.err.matchAll(/^error\[([\w-]+)\]: (.*)\n\s*--> (.*)$/gm)].map((m) =>
    `${m[3]}: ${m[1]}: ${m[2]}`
  );
  assert.deepEqual(errors, [], r.err.slice(-2000));
  assert.equal(r.code, 0, r.err.slice(-2000));
});

Deno.test("deno doc --html writes the reference: an index and a page per export", async () => {
  const out = await Deno.makeTempDir();
  try {
    const r = await runDeno(["doc", "--html", "--name=Crucible", `--output=${out}/api`, "mod.ts"]);
    assert.equal(r.code, 0, r.err);
    const index = await Deno.readTextFile(`${out}/api/index.html`);
    assert.match(index, /Crucible/);
    for (const page of ["rlStep", "ADVANTAGE_ESTIMATORS", "Transformer", "envClient"]) {
      assert.ok(await Deno.stat(`${out}/api/~/${page}.html`).then(() => true, () => false), `${page}.html`);
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
