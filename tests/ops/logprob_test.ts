import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { logprobBackward, logprobForward } from "../../src/ops/logprob.ts";
import { logprobBackwardRef, logprobRef } from "../reference/logprob.ts";
import { intArray, roundF32, uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";
import { checkOp } from "./check_op.ts";

// Sums over V exps in f32: lse and entropy carry about V·ε relative error at worst, log-probs absolute error of
// the same order (here V = 5003: below 1e-4 with margin).
const STATS = { atol: 1e-4, rtol: 1e-5 };
const GRAD = { atol: 1e-6, rtol: 1e-4 };

for (const temperature of [1, 0.6]) {
  Deno.test({
    name: `log-softmax logp, entropy and lse and their backward, temperature ${temperature}, V not a tile multiple`,
    ignore: noGpu,
    async fn() {
      const N = 6, V = 5003;
      const logits = roundF32(uniformArray(1, N * V, -8, 8));
      logits[3 * V + 17] = 40; // one confident row: large max must not overflow
      const target = intArray(2, N, V);
      target[3] = 17;
      const dlogp = uniformArray(3, N);
      const dent = uniformArray(4, N);
      dlogp[5] = 0;
      dent[5] = 0; // a masked row: zero gradient
      await checkOp({
        name: `logprob T=${temperature}`,
        inputs: { logits: { data: logits, shape: [N, V] }, target: { data: target, shape: [N], dtype: "u32" } },
        forward(batch, x) {
          const [logp, entropy, lse] = [0, 1, 2].map(() => zeros(batch.gpu, [N]));
          logprobForward(batch, { logits: x.logits, target: x.target, logp, entropy, lse, temperature });
          return { logp, entropy, lse };
        },
        reference: (x) => logprobRef(x.logits, x.target, V, temperature),
        backward: {
          upstream: { logp: dlogp, entropy: dent },
          gpu(batch, x, dy, y) {
            // Writes dlogits over the logits (after the forward above has read them).
            const args = { logits: x.logits, target: x.target, lse: y.lse, entropy: y.entropy, temperature };
            logprobBackward(batch, { ...args, dlogp: dy.logp, dentropy: dy.entropy });
            return { logits: x.logits };
          },
          reference: (x, dy) => ({
            logits: logprobBackwardRef(x.logits, x.target, dy.logp, dy.entropy, V, temperature),
          }),
        },
        tol: { logp: STATS, entropy: STATS, lse: STATS, dlogits: GRAD },
      });
      // The forward at every workgroup size (a GPU's 256, a CPU rasteriser's 16, and others).
      for (const workgroup of [2, 16, 64, 256]) {
        await checkOp({
          name: `logprob T=${temperature} wg${workgroup}`,
          inputs: { logits: { data: logits, shape: [N, V] }, target: { data: target, shape: [N], dtype: "u32" } },
          forward(batch, x) {
            const [logp, entropy, lse] = [0, 1, 2].map(() => zeros(batch.gpu, [N]));
            logprobForward(batch, { logits: x.logits, target: x.target, logp, entropy, lse, temperature, workgroup });
            return { logp, entropy, lse };
          },
          reference: (x) => logprobRef(x.logits, x.target, V, temperature),
          tol: STATS,
        });
      }
      const gpu = await testGpu();
      const t = { logits: fromHost(gpu, logits, [N, V]), target: fromHost(gpu, target, [N], "u32") };
      const [logp, entropy, lse] = [0, 1, 2].map(() => zeros(gpu, [N]));
      const bad = { ...t, logp, entropy, lse, temperature, workgroup: 24 };
      assert.throws(() => logprobForward(new Batch(gpu), bad), /power of two/);
      for (const x of [t.logits, t.target, logp, entropy, lse]) x.release();
    },
  });
}
