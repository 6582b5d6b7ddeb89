// `deno task bench recall`: the probes' sequences (targets exactly the answer, items flagged, induction strings of
// varying length, the lookup answer the goal's own line) without a GPU, and a short run as a user starts it, whose
// untrained losses sit at chance.
import assert from "node:assert/strict";
import { recallSequence } from "../../bench/recall.ts";
import { Rng } from "../../src/util/random.ts";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("bench recall: copy targets repeat the string, lookup targets are the goal's own command line", () => {
  const rng = new Rng(3);
  for (let k = 0; k < 20; k++) {
    const c = recallSequence("copy", rng, { length: 5, lines: 0 });
    assert.equal(c.ids.length, 12);
    assert.deepEqual(c.ids.slice(7), c.ids.slice(1, 6));
    assert.deepEqual(c.target, [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    assert.deepEqual(c.item, c.target);

    const q = recallSequence("lookup", rng, { length: 0, lines: 4 });
    const first = q.target.indexOf(1);
    const answer = q.ids.slice(first);
    assert.ok(q.target.slice(first).every((t) => t === 1) && q.target.slice(0, first).every((t) => t === 0));
    // The goal item sits between the goal token (7) and a newline just before the answer.
    const goal = q.ids[first - 2];
    assert.equal(q.ids[first - 3], 7);
    assert.equal(answer[2], goal);
    const lines = q.ids.slice(1, first - 3);
    const asText = (a: number[]) => a.join(" ");
    assert.ok(asText(lines).includes(asText(answer)), "the answer is one of the listed lines");
    assert.equal(answer.at(-1), 6);
    assert.equal(q.item.reduce((a, b) => a + b, 0), answer.filter((t) => t >= 100).length);
    assert.ok(answer.filter((t) => t >= 100).length >= 2);
  }
});

Deno.test("bench recall: induction strings repeat like copy but vary in length, so no fixed distance finds them", () => {
  const rng = new Rng(5);
  const lengths = new Set<number>();
  for (let k = 0; k < 40; k++) {
    const q = recallSequence("induction", rng, { length: 12, lines: 0 });
    const n = (q.ids.length - 2) / 2;
    assert.ok(Number.isInteger(n) && n >= 3 && n <= 12, `length ${n}`);
    lengths.add(n);
    assert.equal(q.ids[0], 1);
    assert.equal(q.ids[n + 1], 2);
    assert.deepEqual(q.ids.slice(n + 2), q.ids.slice(1, n + 1));
    assert.deepEqual(q.target, q.ids.map((_, j) => (j > n + 1 ? 1 : 0)));
    assert.deepEqual(q.item, q.target);
  }
  assert.ok(lengths.size >= 6, `lengths seen: ${[...lengths]}`);
});

Deno.test("bench recall: a seek answer follows its item's place in the string, from places that differ", () => {
  const rng = new Rng(9);
  const starts = new Set<number>();
  for (let k = 0; k < 60; k++) {
    const q = recallSequence("seek", rng, { length: 16, lines: 0 });
    assert.equal(q.ids[0], 1);
    assert.equal(q.ids[17], 2);
    const xs = q.ids.slice(1, 17), asked = q.ids[18], answer = q.ids.slice(19);
    assert.ok(answer.length >= 4 && answer.length <= 8, `answer of ${answer.length}`);
    // Where the asked item stands in the first half with the answer after it (an item may occur twice).
    const from = xs.findIndex((x, f) => f < 8 && x === asked && answer.every((a, i) => xs[f + 1 + i] === a));
    assert.ok(from >= 0, `no place in the first half where ${asked} is followed by the answer`);
    starts.add(from);
    assert.deepEqual(q.target, q.ids.map((_, j) => (j >= 19 ? 1 : 0)));
    assert.deepEqual(q.item, q.target);
  }
  // The copy's source is not at the answer's distance from the separator: it starts at many places.
  assert.ok(starts.size >= 6, `starts seen: ${[...starts]}`);
  assert.throws(() => recallSequence("seek", rng, { length: 3, lines: 0 }), /--length must be at least 4.*got 3/);
});

Deno.test({
  name: "bench recall runs all four probes; an untrained model's item loss is at chance",
  ignore: noGpu,
  async fn() {
    const args = ["bench", "recall", "--steps", "2", "--batch", "2", "--every", "1"];
    const r = await runCli([...args, "--json"]);
    assert.equal(r.code, 0, r.err);
    const reports = r.out.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(reports.map((x) => x.task), ["copy", "induction", "seek", "lookup"]);
    for (const x of reports) {
      assert.equal(x.curve.length, 2);
      // Two steps at a warm-up learning rate cannot copy yet: within 1 nat of log(items).
      for (const c of x.curve) assert.ok(Math.abs(c.itemLoss - x.chanceLoss) < 1, JSON.stringify(c));
      assert.equal(x.learnedAt, null);
      assert.ok(x.secondsPerStep > 0);
    }
    const bad = await runCli([...args, "--task", "sort"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /--task must be copy, induction, seek, lookup or all, got "sort"/);
    const yaml = await Deno.makeTempFile({ suffix: ".yaml" });
    await Deno.writeTextFile(
      yaml,
      (await Deno.readTextFile(`${ROOT}configs/models/tiny.yaml`)).replace(
        /num_hidden_layers: \d+/,
        "num_hidden_layers: 0",
      ),
    );
    const badModel = await runCli([...args, "--tiny", yaml]);
    await Deno.remove(yaml);
    assert.notEqual(badModel.code, 0);
    assert.match(badModel.err, /"num_hidden_layers" too small/);
  },
});
