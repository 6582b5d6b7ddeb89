import assert from "node:assert/strict";
import { Batch } from "../../src/gpu/batch.ts";
import { fromHost, zeros } from "../../src/gpu/tensor.ts";
import { logprobBackward, logprobForward } from "../../src/ops/logprob.ts";
import { assertClose } from "../reference/check.ts";
import { logprobBackwardRef, logprobRef } from "../reference/logprob.ts";
import { intArray, roundF32, uniformArray } from "../reference/random.ts";
import { noGpu, testGpu } from "../no_gpu.ts";

// Sums over V exps in f32: lse and entropy carry about V·ε relative error at worst, log-probs absolute error of
// the same order (here V = 5003: below 1e-4 with margin).
const STATS = { atol: 1e-4, rtol: 1e-5 };
const GRAD = { atol: 1e-6, rtol: 1e-4 };

for (const temperature of [1, 0.6]) {
  Deno.test({
    name: `log-softmax logp, entropy and lse and their backward, temperature ${temperature}, V not a tile multiple`,
    ignore: noGpu,
    async fn() {
      const gpu = await testGpu();
      const N = 6, V = 5003;
      const logits = roundF32(uniformArray(1, N * V, -8, 8));
      logits[3 * V + 17] = 40; // one confident row: large max must not overflow
      const target = intArray(2, N, V);
      target[3] = 17;
      const dlogp = uniformArray(3, N);
      const dent = uniformArray(4, N);
      dlogp[5] = 0;
      dent[5] = 0; // a masked row: zero gradient
      const tl = fromHost(gpu, logits, [N, V]);
      const tt = fromHost(gpu, target, [N], "u32");
      const logp = zeros(gpu, [N]), ent = zeros(gpu, [N]), lse = zeros(gpu, [N]);
      const tdl = fromHost(gpu, dlogp, [N]), tde = fromHost(gpu, dent, [N]);
      const batch = new Batch(gpu);
      const fwd = { logits: tl, target: tt, logp, entropy: ent, lse, temperature };
      logprobForward(batch, fwd);
      logprobBackward(batch, { logits: tl, target: tt, lse, entropy: ent, dlogp: tdl, dentropy: tde, temperature });
      const [gl, ge, gs, gd] = await batch.read([logp, ent, lse, tl]);
      const ref = logprobRef(logits, target, V, temperature);
      assertClose("logp", gl, ref.logp, STATS);
      assertClose("entropy", ge, ref.entropy, STATS);
      assertClose("lse", gs, ref.lse, STATS);
      assertClose("dlogits", gd, logprobBackwardRef(logits, target, dlogp, dent, V, temperature), GRAD);
      // The forward at every workgroup size (a GPU's 256, a CPU rasteriser's 16, and others).
      // The backward wrote over tl: a fresh copy of the logits.
      const fresh = fromHost(gpu, logits, [N, V]);
      for (const workgroup of [2, 16, 64, 256]) {
        const outs = [zeros(gpu, [N]), zeros(gpu, [N]), zeros(gpu, [N])];
        const b = new Batch(gpu);
        const [lp, en, ls] = outs;
        logprobForward(b, {
          logits: fresh,
          target: tt,
          logp: lp,
          entropy: en,
          lse: ls,
          temperature,
          workgroup,
        });
        const [wl, we, ws] = await b.read(outs);
        assertClose(`logp wg${workgroup}`, wl, ref.logp, STATS);
        assertClose(`entropy wg${workgroup}`, we, ref.entropy, STATS);
        assertClose(`lse wg${workgroup}`, ws, ref.lse, STATS);
        for (const t of outs) t.release();
      }
      fresh.release();
      assert.throws(() => logprobForward(new Batch(gpu), { ...fwd, workgroup: 24 }), /power of two/);
    },
  });
}
