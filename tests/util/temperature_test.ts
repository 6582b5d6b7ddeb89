// The one rule for log-probabilities under greedy decoding (src/util/temperature.ts), and the ONNX engine's CPU
// sampler following it: a greedy token's log-probability is that of softmax(logits), a sampled one's of
// softmax(logits / T).
import assert from "node:assert/strict";
import { pickToken } from "../../src/onnx/pick.ts";
import { logprobTemperature } from "../../src/util/temperature.ts";

const logSoftmax = (z: number[], T: number, i: number) => {
  const m = Math.max(...z.map((x) => x / T));
  return z[i] / T - m - Math.log(z.reduce((a, x) => a + Math.exp(x / T - m), 0));
};

Deno.test("greedy counts as temperature 1; any other temperature is its own", () => {
  assert.deepEqual([0, 0.5, 1, 2].map(logprobTemperature), [1, 0.5, 1, 2]);
  const z = [0.3, 2.1, -1, 1.7];
  const greedy = pickToken(z, { temperature: 0 }, 0.9);
  assert.equal(greedy.id, 1);
  assert.ok(Math.abs(greedy.logprob - logSoftmax(z, 1, 1)) < 1e-12, `${greedy.logprob}`);
  const hot = pickToken(z, { temperature: 0.5 }, 0);
  assert.ok(Math.abs(hot.logprob - logSoftmax(z, 0.5, hot.id)) < 1e-12, `${hot.logprob}`);
});
