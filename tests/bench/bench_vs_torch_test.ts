// `deno task bench vs-torch`: the rounds' arithmetic (medians, per-round ratios) by hand, the bad --rounds message,
// and one round as a user runs it with no PyTorch to be found (the PyTorch side skipped, Crucible's side measured).
import assert from "node:assert/strict";
import { median, summarize } from "../../bench/vs_torch.ts";
import { noGpu } from "../no_gpu.ts";
import { BENCH_TASK_FLAGS, runDeno } from "../subprocess.ts";

const vsTorch = (args: string[]) => runDeno([...BENCH_TASK_FLAGS, "vs-torch", ...args]);

Deno.test("median: the middle value, the mean of the middle two for an even count, and none of nothing", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([7]), 7);
  assert.throws(() => median([]), RangeError);
});

Deno.test("summarize: one row per work item in first-seen order, the median of the rounds' ratios", () => {
  const rows = summarize([
    { work: "train", crucible: 300, torch: 100 },
    { work: "decode", crucible: 50, torch: null },
    { work: "train", crucible: 200, torch: 200 },
    { work: "decode", crucible: 70, torch: null },
    { work: "train", crucible: 400, torch: 250 },
  ]);
  assert.deepEqual(rows.map((r) => r.work), ["train", "decode"]);
  const [train, decode] = rows;
  // Ratios 3, 1, 1.6: the median is 1.6, not the ratio of the medians (300 / 200 = 1.5).
  assert.deepEqual(train.rounds.map((r) => r.ratio), [3, 1, 1.6]);
  assert.equal(train.ratio, 1.6);
  assert.equal(train.crucible, 300);
  assert.equal(train.torch, 200);
  assert.equal(decode.crucible, 60);
  assert.equal(decode.torch, null);
  assert.equal(decode.ratio, null);
  assert.deepEqual(decode.rounds.map((r) => r.ratio), [null, null]);
});

Deno.test("bench vs-torch --rounds 0 stops with one message naming the flag", async () => {
  for (const bad of ["0", "-2", "1.5", "x"]) {
    const r = await vsTorch([`--rounds=${bad}`]);
    assert.equal(r.code, 2, r.out);
    assert.match(r.err, new RegExp(`--rounds must be an integer in \\[1, 100\\], got "${bad.replace(".", "\\.")}"`));
  }
});

Deno.test({
  name: "bench vs-torch --rounds 1 without PyTorch: its side skipped by name, Crucible's three rates measured",
  ignore: noGpu,
  async fn() {
    const r = await vsTorch(["--rounds", "1", "--python", "/nonexistent/python3", "--json"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.err, /PyTorch side skipped: no Python with torch; on Debian install it with `apt-get install/);
    const j = JSON.parse(r.out.trim());
    assert.equal(j.rounds, 1);
    assert.deepEqual(j.rows.map((x: { work: string }) => x.work), [
      "train, 512-token batches",
      "train, 4096-token batches",
      "decode, 32 sequences, 64-token prompts",
    ]);
    for (const row of j.rows) {
      assert.ok(Number.isFinite(row.crucible) && row.crucible > 0, JSON.stringify(row));
      assert.equal(row.torch, null);
      assert.equal(row.ratio, null);
      assert.equal(row.rounds.length, 1);
    }
  },
});
