// BFCL's own multi-turn entries, where a copy of gorilla's `bfcl_eval/data/` is given in BFCL_DATA_DIR (Crucible ships
// none): every entry loads, passes the checker when its own ground truth is played as the model's calls, with no call
// of it failing, and fails once the last call of its last turn is dropped. Skipped without the directory. With
// BFCL_UPSTREAM (gorilla's berkeley-function-call-leaderboard folder) as well, every entry is played through an
// episode as a model sends it and every call result and turn state must equal gorilla's Python classes' own.
import assert from "node:assert/strict";
import { loadBfclDir } from "../../../tasks/bfcl/entries.ts";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { ERROR_PREFIX, executeCall, newInstances } from "../../../tasks/bfcl/execute.ts";
import { checkEntry, parseGroundTruth } from "../../../tasks/bfcl/checker.ts";
import { compareEntry, upstreamLines } from "../../../bench/bfcl_fidelity.ts";

const DIR = Deno.env.get("BFCL_DATA_DIR");

Deno.test({
  name: "BFCL's own entries (BFCL_DATA_DIR): ground truth runs clean and passes; without its last call it fails",
  ignore: !DIR,
  async fn() {
    const { entries } = await loadBfclDir(DIR!);
    assert.ok(entries.length >= 800, `${entries.length} entries`);
    let dropped = 0;
    for (const e of entries) {
      const turns = e.groundTruth.map((turn, t) => turn.map((text) => parseGroundTruth(e, t, text)));
      const inst = newInstances(e, newInstance);
      for (const [t, calls] of turns.entries()) {
        for (const c of calls) {
          const r = executeCall(inst, c);
          assert.ok(!r.startsWith(ERROR_PREFIX), `${e.id} turn ${t}: ${c.name} gave ${r}`);
        }
      }
      assert.deepEqual(checkEntry(e, turns.map((calls) => [calls]), newInstance), { valid: true }, e.id);
      const last = turns.length - 1;
      if (turns[last].length === 0) continue;
      const cut = turns.map((calls, t) => [t === last ? calls.slice(0, -1) : calls]);
      assert.equal(checkEntry(e, cut, newInstance).valid, false, `${e.id} without its last call`);
      dropped++;
    }
    assert.ok(dropped > 0);
  },
});

const UPSTREAM = Deno.env.get("BFCL_UPSTREAM");

Deno.test({
  name: "BFCL's own entries against gorilla's Python classes (BFCL_DATA_DIR, BFCL_UPSTREAM): byte for byte",
  ignore: !DIR || !UPSTREAM,
  async fn() {
    const { entries, docs } = await loadBfclDir(DIR!);
    const byId = new Map(entries.map((e) => [e.id, e]));
    let calls = 0, seen = 0;
    for await (const line of upstreamLines({ upstream: UPSTREAM!, dataDir: DIR! })) {
      const r = compareEntry(byId.get(line.id)!, docs, line);
      assert.deepEqual(r.mismatches, [], line.id);
      assert.ok(r.passed, `${line.id} did not end passed`);
      calls += r.calls;
      seen++;
    }
    assert.equal(seen, entries.length);
    assert.ok(calls > 4000, `${calls} calls`);
  },
});
