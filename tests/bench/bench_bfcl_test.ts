// `deno task bench bfcl-server` as a user runs it (a subprocess, a short window): one JSON line with the step rate
// and every episode of the generated tasks passing on its own ground truth. The rate is reported, never asserted.
import assert from "node:assert/strict";
import { runCli } from "../subprocess.ts";

Deno.test("bench bfcl-server --json reports steps/s over concurrent episodes", async () => {
  const r = await runCli(["bench", "bfcl-server", "--episodes", "4", "--seconds", "0.5", "--json"]);
  assert.equal(r.code, 0, r.err);
  const row = JSON.parse(r.out.trim().split("\n").at(-1)!);
  assert.equal(row.episodes, 4);
  assert.ok(row.steps > 0 && row.steps_per_s > 0, JSON.stringify(row));
  const [passed, finished] = row.ground_truth_passed.split("/").map(Number);
  assert.ok(finished > 0 && passed === finished, row.ground_truth_passed);
});
