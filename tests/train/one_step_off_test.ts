// One-step-off rollouts in one process (rollout.max_staleness=1, no --cluster): step t+1's episodes are sampled by
// version t − 1 while step t updates, so every step after the first trains on episodes one version behind, never
// more; the sampled log-probabilities the losses read are version t − 1's (recomputed here from that version's
// checkpoint, and unlike the next version's); and a run stopped while episodes play ahead resumes exactly.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { AHEAD_FILE, type AheadRecord } from "../../src/train/one_step_off.ts";
import { type Reporter, runTraining } from "../../src/train/run.ts";
import { fromPositions, sequenceLogprobs } from "../../src/train/sequences.ts";
import { noGpu } from "../no_gpu.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../src/bench/smoke_run.ts";

const QUIET: Reporter = { bar: () => ({ tick() {}, done() {} }), line() {} };

async function config(dir: string) {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  return resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    `model.tiny=${dir}/tiny.yaml`,
    ...SMOKE_RUN,
    "data.prompt_file=null",
    "sft.enabled=false",
    "rollout.max_staleness=1",
    "actor.lr=0.01",
    "actor.recompute_old_logprob=true",
    "actor.tis_cap=2",
    "trainer.total_steps=3",
    "trainer.test_freq=0",
  ]);
}

function rlMetrics(runDir: string): Record<string, number>[] {
  return Deno.readTextFileSync(`${runDir}/metrics.jsonl`).trim().split("\n").map((l) => JSON.parse(l))
    .filter((m) => m.phase === "rl");
}

/** A metrics line without its timings (they differ between any two runs). */
function untimed(m: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).filter(([k]) => !/^(time|tokens_per_s|.*_s)$/.test(k)));
}

Deno.test({
  name: "max_staleness=1 in one process: one version behind, the sampler's log-probs, exact resume",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir);
    const straight = `${dir}/straight`;
    const a = await runTraining({
      config: c,
      runDir: straight,
      resume: false,
      reporter: QUIET,
      stopRequested: () => false,
    });
    assert.equal(a.interrupted, false);
    const ms = rlMetrics(straight);
    assert.deepEqual(ms.map((m) => m.step), [1, 2, 3]);
    // Step 1 plays at once on version 0; steps 2 and 3 were played during the update before them.
    assert.deepEqual(ms.map((m) => m.rollout_version), [0, 0, 1]);
    for (const m of ms) {
      const lag = m.step - 1 - m.rollout_version;
      assert.ok(lag >= 0 && lag <= 1, `step ${m.step} trained on version ${m.rollout_version}`);
      assert.equal(m[`staleness_${lag}`], m.episodes, `step ${m.step}: every episode ${lag} behind`);
      assert.equal(m[`staleness_${1 - lag}`], undefined);
      assert.equal(m.stale_dropped ?? 0, 0);
      assert.ok(m.tis_ratio_mean > 0, `step ${m.step} has its TIS metrics`);
    }
    assert.ok(ms.every((m) => m.policy_loss !== undefined), "every step updated the policy");

    // The checkpoint after step 2 keeps step 3's episodes, played ahead by version 1.
    const ahead = JSON.parse(
      await Deno.readTextFile(`${straight}/checkpoints/rl-step-000002/${AHEAD_FILE}`),
    ) as AheadRecord;
    assert.equal(ahead.step, 3);
    assert.equal(ahead.version, 1);
    const ts = ahead.played.trajectories.filter((t) => t.mask.includes(1));
    assert.ok(ts.length > 0 && ts.every((t) => t.version === 1));
    await assert.rejects(Deno.stat(`${straight}/checkpoints/final/${AHEAD_FILE}`), Deno.errors.NotFound);
    const seqs = ts.map((t) => ({
      ids: [...t.promptIds, ...t.responseIds],
      promptLength: t.promptIds.length,
      mask: t.mask,
    }));
    const gpu = await getGpu();
    const worst = async (step: number) => {
      const m = await loadModelDir(`${straight}/checkpoints/rl-step-00000${step}`);
      const model = Transformer.fromHost(gpu, m.config, m.tensors);
      const lp = await sequenceLogprobs(gpu, model, seqs, { temperature: c.rollout.temperature, maxTokens: 8192 });
      model.weights.release();
      let max = 0;
      seqs.forEach((q, i) => {
        const mine = fromPositions(q, lp[i]);
        q.mask.forEach((k, j) => k === 1 && (max = Math.max(max, Math.abs(mine[j] - ts[i].logprobs[j]))));
      });
      return max;
    };
    const v1 = await worst(1), v2 = await worst(2);
    assert.ok(v1 < 1e-3, `version 1 recomputes the sampled log-probs (worst difference ${v1})`);
    assert.ok(v2 > 10 * v1 && v2 > 1e-3, `version 2 does not (worst difference ${v2}, version 1's ${v1})`);

    // Stopped after step 1, while step 2's episodes play ahead; resumed, it ends as the uninterrupted run.
    const run = `${dir}/resumed`;
    const stopAfterStep1 = () => {
      try {
        return Deno.readTextFileSync(`${run}/metrics.jsonl`).includes('"phase":"rl"');
      } catch {
        return false;
      }
    };
    const b = await runTraining({
      config: c,
      runDir: run,
      resume: false,
      reporter: QUIET,
      stopRequested: stopAfterStep1,
    });
    assert.equal(b.interrupted, true);
    const kept = JSON.parse(await Deno.readTextFile(`${run}/checkpoints/rl-step-000001/${AHEAD_FILE}`)) as AheadRecord;
    assert.deepEqual([kept.step, kept.version], [2, 0]);
    const r = await runTraining({ config: c, runDir: run, resume: true, reporter: QUIET, stopRequested: () => false });
    assert.equal(r.interrupted, false);
    assert.deepEqual(rlMetrics(run).map(untimed), ms.map(untimed));
    const want = (await loadModelDir(`${straight}/checkpoints/final`)).tensors;
    const got = (await loadModelDir(`${run}/checkpoints/final`)).tensors;
    for (const [name, w] of want) assert.deepEqual(got.get(name), w, name);
    await Deno.remove(dir, { recursive: true });
  },
});
