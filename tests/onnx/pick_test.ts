/**
 * The CPU token choice of the ONNX path (src/onnx/pick.ts) against the f64 sampling reference
 * (tests/reference/sample.ts), which the GPU sampler (shaders/sample.wgsl) is checked against in
 * tests/ops/sample_test.ts: same logits, same settings, same uniform draw -> same token and log-probability. So the
 * two samplers' rules cannot drift apart unseen: greedy ties, top-k ties at the k-th logit, top-p ties at the mass
 * boundary, and the draw's strict `cumulative > u · mass`.
 */
import assert from "node:assert/strict";
import { pickToken } from "../../src/onnx/pick.ts";
import type { SampleSettings } from "../../src/ops/sample.ts";
import { intArray, uniformArray } from "../reference/random.ts";
import { sampleRowRef } from "../reference/sample.ts";

/**
 * pick.ts computes exp((z - max) / T) where the reference computes exp(z / T - max(z / T)): both f64, they differ
 * by a few ulps, so a token may differ only where the reference's closest decision lies within this fraction of
 * the mass. Such disagreements are counted and must stay rare.
 */
const MARGIN = 1e-9;

const SETTINGS: [string, SampleSettings][] = [
  ["greedy", { temperature: 0 }],
  ["temperature 1", {}],
  ["temperature 0.7", { temperature: 0.7 }],
  ["temperature 1.5", { temperature: 1.5 }],
  ["top-k 1", { temperature: 1, topK: 1 }],
  ["top-k 5", { temperature: 0.8, topK: 5 }],
  ["top-k V (off)", { temperature: 1, topK: 64 }],
  ["top-p 0.3", { temperature: 1, topP: 0.3 }],
  ["top-p 0.9", { temperature: 1.2, topP: 0.9 }],
  ["top-k 10 + top-p 0.8", { temperature: 0.7, topK: 10, topP: 0.8 }],
];

/** Rows of logits: spread, peaked, and coarse (few distinct values, so ties at every boundary). */
function rows(V: number): [string, number[]][] {
  const out: [string, number[]][] = [];
  for (let r = 0; r < 8; r++) {
    out.push([`spread ${r}`, [...uniformArray(100 + r, V, -4, 4)]]);
    out.push([`peaked ${r}`, [...uniformArray(200 + r, V, -1, 1)].map((x, i) => (i % 17 === r ? x + 6 : x))]);
    out.push([`ties ${r}`, [...intArray(300 + r, V, 4)].map((x) => x * 0.5)]);
  }
  return out;
}

function checkAgreement(V: number) {
  const draws = [0, 1e-12, 0.25, 0.5, 0.999999, ...uniformArray(7, 24, 0, 1)];
  let compared = 0, close = 0;
  for (const [mode, settings] of SETTINGS) {
    for (const [name, z] of rows(V)) {
      for (const u of draws) {
        const ref = sampleRowRef(z, u, settings);
        const got = pickToken(z, settings, u);
        const what = `${mode}, ${name}, u = ${u}`;
        compared++;
        if (got.id !== ref.id && ref.margin < MARGIN) {
          close++;
          continue;
        }
        assert.equal(got.id, ref.id, `${what}: pick.ts chose ${got.id}, the reference ${ref.id}`);
        const tol = 1e-12 * Math.max(1, Math.abs(ref.logprob));
        assert.ok(Math.abs(got.logprob - ref.logprob) <= tol, `${what}: logprob ${got.logprob} vs ${ref.logprob}`);
      }
    }
  }
  return { compared, close };
}

Deno.test("pick.ts chooses the f64 reference's token for every setting, row and draw", () => {
  const { compared, close } = checkAgreement(64);
  assert.ok(compared > 5000, `only ${compared} rows compared`);
  assert.ok(close <= compared / 1000, `${close} of ${compared} rows disagreed within ${MARGIN} of a boundary`);
});

Deno.test("pick.ts keeps ties at the top-k and top-p boundaries and draws with a strict cumulative > u · mass", () => {
  // Logits 3, 2, 2, 2, 0: top-k 2 keeps the three tokens tied at the 2nd-largest logit.
  const z = [3, 2, 2, 2, 0];
  const kept = (s: SampleSettings) => sampleRowRef(z, 0.5, s).kept.map(Number).join("");
  assert.equal(kept({ topK: 2 }), "11110");
  // The first token alone holds ~0.4 of the mass: top-p 0.5 reaches its goal inside the tied group and keeps all.
  assert.equal(kept({ topP: 0.5 }), "11110");
  for (const s of [{ topK: 2 }, { topP: 0.5 }, { topK: 2, topP: 0.3 }]) {
    for (const u of [0, 0.3, 0.45, 0.6, 0.9, 0.999]) {
      assert.equal(pickToken(z, s, u).id, sampleRowRef(z, u, s).id, `${JSON.stringify(s)} u = ${u}`);
    }
  }
  // Four distinct logits of weight exactly 1 each (differences of 2 in 1e16, temperature 1e30): top-p 0.5 reaches
  // its goal of 2 exactly after two groups, and `cumulative >= goal` keeps those two, not a third.
  const flat = [1e16, 1e16 - 2, 1e16 - 4, 1e16 - 6];
  const wide = { temperature: 1e30, topP: 0.5 };
  assert.deepEqual(sampleRowRef(flat, 0.9, wide).kept, [true, true, false, false]);
  assert.equal(pickToken(flat, wide, 0.9).id, 1);
  // u = 0 takes the first kept token with weight; greedy takes the first of tied maxima.
  assert.equal(pickToken([1, 5, 5, 2], { temperature: 0 }, 0.7).id, 1);
  assert.equal(pickToken([-9, 1, 1], {}, 0).id, sampleRowRef([-9, 1, 1], 0).id);
});
