// One-step-off rollouts in one process (rollout.max_staleness=1, no --cluster): step t+1's episodes are sampled by
// version t − 1 while step t updates, so every step after the first trains on episodes one version behind, never
// more; the sampled log-probabilities the losses read are version t − 1's (recomputed here from that version's
// checkpoint, and unlike the next version's); and a run stopped while episodes play ahead resumes exactly. With
// LoRA the sampler holds its own frozen base and a copy of the adapter: the episodes of steps 2 and 3 were sampled by
// the adapters of versions 0 and 1 (recomputed from them over the base), never by a later or half-updated one, and a
// stopped LoRA run resumes to the same adapter.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { loraTransformer } from "../../src/model/lora_model.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { ADAPTER_WEIGHTS, bindAdapter, loadAdapterDir } from "../../src/model/peft.ts";
import { loadSafetensors } from "../../src/model/safetensors.ts";
import { Transformer } from "../../src/model/transformer.ts";
import { runLora } from "../../src/train/lora.ts";
import { AHEAD_FILE, type AheadRecord } from "../../src/train/one_step_off.ts";
import { runTraining } from "../../src/train/run.ts";
import { fromPositions, sequenceLogprobs } from "../../src/update/sequences.ts";
import { configuredTask, loadModel } from "../../src/train/setup.ts";
import type { Trajectory } from "../../src/rollout/trajectory.ts";
import { noGpu } from "../no_gpu.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../bench/smoke_run.ts";
import type { Reporter } from "../../src/train/types.ts";

const QUIET: Reporter = { bar: () => ({ tick() {}, done() {} }), line() {} };

async function config(dir: string, more: string[] = []) {
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
    ...more,
  ]);
}

function rlMetrics(runDir: string): Record<string, number>[] {
  return Deno.readTextFileSync(`${runDir}/metrics.jsonl`).trim().split("\n").map((l) => JSON.parse(l))
    .filter((m) => m.phase === "rl");
}

/** A stop request that comes once the run's first RL step is logged. */
function stopAfterStep1(runDir: string): () => boolean {
  return () => {
    try {
      return Deno.readTextFileSync(`${runDir}/metrics.jsonl`).includes('"phase":"rl"');
    } catch {
      return false;
    }
  };
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
    const b = await runTraining({
      config: c,
      runDir: run,
      resume: false,
      reporter: QUIET,
      stopRequested: stopAfterStep1(run),
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

/** The trajectories a checkpoint kept as played ahead (with a sampled token), and their version. */
async function aheadOf(checkpoint: string): Promise<{ step: number; version: number; ts: Trajectory[] }> {
  const r = JSON.parse(await Deno.readTextFile(`${checkpoint}/${AHEAD_FILE}`)) as AheadRecord;
  return { step: r.step, version: r.version, ts: r.played.trajectories.filter((t) => t.mask.includes(1)) };
}

/** The largest difference between the sampled log-probs of `ts` and those `model` computes for them. */
async function worstGap(model: Transformer, ts: readonly Trajectory[], temperature: number): Promise<number> {
  const seqs = ts.map((t) => ({
    ids: [...t.promptIds, ...t.responseIds],
    promptLength: t.promptIds.length,
    mask: t.mask,
  }));
  const lp = await sequenceLogprobs(model.gpu, model, seqs, { temperature, maxTokens: 8192 });
  let max = 0;
  seqs.forEach((q, i) => {
    const mine = fromPositions(q, lp[i]);
    q.mask.forEach((k, j) => k === 1 && (max = Math.max(max, Math.abs(mine[j] - ts[i].logprobs[j]))));
  });
  return max;
}

Deno.test({
  name: "max_staleness=1 in one process with LoRA: the sampler samples with the adapter of the version it names",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir, ["model.lora_rank=4", "model.lora_alpha=8", "actor.lr=0.05"]);
    const run = `${dir}/run`;
    const r = await runTraining({ config: c, runDir: run, resume: false, reporter: QUIET, stopRequested: () => false });
    assert.equal(r.interrupted, false);
    const ms = rlMetrics(run);
    assert.deepEqual(ms.map((m) => m.step), [1, 2, 3]);
    assert.deepEqual(ms.map((m) => m.rollout_version), [0, 0, 1]);
    for (const m of ms) {
      const lag = m.step - 1 - m.rollout_version;
      assert.equal(m[`staleness_${lag}`], m.episodes, `step ${m.step}: every episode ${lag} behind`);
      assert.equal(m.stale_dropped ?? 0, 0);
      assert.ok(m.tis_ratio_mean > 0 && m.policy_loss !== undefined, `step ${m.step} updated with TIS`);
    }
    const ckpt = (k: number) => `${run}/checkpoints/rl-step-00000${k}`;
    // Each checkpoint is a PEFT adapter: the base was not saved, so the sampler's copy cannot have come from a file.
    await assert.rejects(Deno.stat(`${ckpt(1)}/model.safetensors`), Deno.errors.NotFound);

    // Adapter version v over the frozen base, stored as the learner stores it (f16 matrices where the GPU allows):
    // version 0 is the run's fresh adapter, version v > 0 the checkpoint after step v.
    const gpu = await getGpu();
    const host = await loadModel(c, (await configuredTask(c)).task);
    const fresh = (await runLora(c, host.config))!;
    const version = async (v: number) => {
      const a = v === 0 ? { settings: fresh.settings, tensors: fresh.adapter } : bindAdapter(
        host.config,
        await loadAdapterDir(ckpt(v)),
      );
      return loraTransformer(gpu, host.config, host.tensors, {
        settings: a.settings,
        adapter: a.tensors,
        baseDtype: c.model.base_dtype,
      });
    };
    const temperature = c.rollout.temperature;
    for (const [at, played] of [[1, 0], [2, 1]]) {
      const ahead = await aheadOf(ckpt(at));
      assert.deepEqual([ahead.step, ahead.version], [at + 1, played], `the episodes kept at ${ckpt(at)}`);
      assert.ok(ahead.ts.length > 0 && ahead.ts.every((t) => t.version === played));
      const gaps: number[] = [];
      for (const v of [played, played + 1]) {
        const model = await version(v);
        gaps.push(await worstGap(model, ahead.ts, temperature));
        model.lora!.release();
        model.weights.release();
      }
      const [own, next] = gaps;
      assert.ok(own < 1e-3, `step ${at + 1}: version ${played}'s adapter recomputes the sampled log-probs (${own})`);
      assert.ok(
        next > 10 * own && next > 1e-3,
        `step ${at + 1}: version ${played + 1}'s does not (${next}, own ${own})`,
      );
    }

    // Stopped after step 1, while step 2's episodes play ahead; resumed over the base it loads again, it ends with the
    // uninterrupted run's adapter, bit for bit.
    const resumed = `${dir}/resumed`;
    const b = await runTraining({
      config: c,
      runDir: resumed,
      resume: false,
      reporter: QUIET,
      stopRequested: stopAfterStep1(resumed),
    });
    assert.equal(b.interrupted, true);
    const kept = await aheadOf(`${resumed}/checkpoints/rl-step-000001`);
    assert.deepEqual([kept.step, kept.version], [2, 0]);
    const again = await runTraining({
      config: c,
      runDir: resumed,
      resume: true,
      reporter: QUIET,
      stopRequested: () => false,
    });
    assert.equal(again.interrupted, false);
    assert.deepEqual(rlMetrics(resumed).map(untimed), ms.map(untimed));
    const adapter = (d: string) => loadSafetensors(`${d}/checkpoints/final/${ADAPTER_WEIGHTS}`);
    const want = await adapter(run), got = await adapter(resumed);
    assert.deepEqual([...got.keys()], [...want.keys()]);
    for (const [name, w] of want) assert.deepEqual(got.get(name)!.data, w.data, name);
    await Deno.remove(dir, { recursive: true });
  },
});
