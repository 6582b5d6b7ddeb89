// Divergence is a stop, not a result (issue 32): a step that blows the weights up is rolled back to the weights and
// optimizer state before it, bit for bit, and the run goes on with the next batch; past trainer.max_rollbacks (or
// when every step diverged) the run stops with exit code 2, saves nothing of the diverged step and writes no `final`,
// at the first step of a phase as at its last. A loss spike takes the same path.
import assert from "node:assert/strict";
import { SMOKE_MODEL_YAML, smokeArgs } from "../../bench/smoke_run.ts";
import { loadSafetensors } from "../../src/model/safetensors.ts";
import { noGpu } from "../no_gpu.ts";
import { runCli } from "../subprocess.ts";

function budget(dir: string): string[] {
  return smokeArgs(`${dir}/tiny.yaml`, [
    "sft.enabled=false",
    // Rewards are all 0 for the tiny model: the entropy bonus gives the update a gradient.
    "actor.entropy_coeff=0.1",
    "trainer.test_freq=0",
  ]);
}

const lines = (path: string) => Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));

/** Asserts that two checkpoints hold the same tensors, bit for bit, in `file`. */
async function assertSameTensors(a: string, b: string, file: string): Promise<void> {
  const [x, y] = await Promise.all([loadSafetensors(`${a}/${file}`), loadSafetensors(`${b}/${file}`)]);
  assert.deepEqual([...x.keys()].sort(), [...y.keys()].sort());
  for (const [name, t] of x) {
    const u = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const v = new Uint8Array(y.get(name)!.data.buffer, y.get(name)!.data.byteOffset, y.get(name)!.data.byteLength);
    assert.ok(u.length === v.length && u.every((q, i) => q === v[i]), `${file}: ${name} differs`);
  }
}

Deno.test({
  name: "actor.lr=1e6 exits 2 at its first step with max_rollbacks=0, with no final checkpoint; a sane lr runs and " +
    "logs the weights' norm",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const huge = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/h`,
      ...budget(dir),
      "actor.lr=1e6",
      "trainer.total_steps=3",
      "trainer.max_rollbacks=0",
    ]);
    assert.equal(huge.code, 2, huge.err);
    assert.match(huge.err, /diverged at RL step 1: one step multiplied the weights' norm by [\d.e+]+/);
    assert.match(huge.err, /actor\.lr=100000\b/);
    await assert.rejects(Deno.stat(`${dir}/h/checkpoints/final`));
    await assert.rejects(Deno.stat(`${dir}/h/checkpoints/rl-step-000001`));
    const sane = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/s`,
      ...budget(dir),
      "actor.lr=0.01",
      "trainer.total_steps=2",
    ]);
    assert.equal(sane.code, 0, sane.err);
    const norms = lines(`${dir}/s/metrics.jsonl`).map((m) => m.weight_norm);
    assert.equal(norms.length, 2);
    assert.ok(norms.every((n) => Number.isFinite(n) && n > 0), `${norms}`);
  },
});

Deno.test({
  name: "a diverged RL step is rolled back bit for bit and the run finishes; one that keeps diverging exits 2",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    // Step 2's update leaves non-finite weights (injected): rolled back, its batch skipped, step 3 trains on.
    const run = `${dir}/r`;
    const args = ["train", "textcraft", "--run-dir", run, ...budget(dir), "actor.lr=0.01", "trainer.total_steps=3"];
    const once = await runCli(args, { env: { CRUCIBLE_DIVERGE_AT: "rl update 2" } });
    assert.equal(once.code, 0, once.err);
    assert.match(once.out, /RL step 2 diverged \(the weights are no longer finite\): rolled back[^\n]*rollback 1 of 3/);
    const m = lines(`${run}/metrics.jsonl`);
    assert.deepEqual(m.filter((l) => l.phase === "rl").map((l) => l.step), [1, 2, 3]);
    const rolled = m.filter((l) => l.phase === "rl_rollback");
    assert.equal(rolled.length, 1);
    assert.equal(rolled[0].step, 2);
    assert.equal(rolled[0].rollbacks, 1);
    assert.equal(rolled[0].max_rollbacks, 3);
    assert.match(rolled[0].why, /no longer finite/);
    assert.ok(rolled[0].copy_bytes > 0);
    // Step 2's checkpoint (saved after the rollback) holds step 1's weights and optimizer moments, bit for bit.
    await assertSameTensors(
      `${run}/checkpoints/rl-step-000001`,
      `${run}/checkpoints/rl-step-000002`,
      "model.safetensors",
    );
    await assertSameTensors(
      `${run}/checkpoints/rl-step-000001`,
      `${run}/checkpoints/rl-step-000002`,
      "optimizer.safetensors",
    );
    // With PPO's critic (GAE), the critic's update of the diverged step is undone with the actor's.
    const gae = `${dir}/g`;
    const withCritic = await runCli(
      ["train", "textcraft", "--run-dir", gae, ...budget(dir), "actor.lr=0.01", "trainer.total_steps=2"].concat(
        "algorithm.adv_estimator=gae",
      ),
      { env: { CRUCIBLE_DIVERGE_AT: "rl update 2" } },
    );
    assert.equal(withCritic.code, 0, withCritic.err);
    for (const file of ["model.safetensors", "critic.safetensors", "critic_optimizer.safetensors"]) {
      await assertSameTensors(`${gae}/checkpoints/rl-step-000001`, `${gae}/checkpoints/rl-step-000002`, file);
    }
    const norms = m.filter((l) => l.phase === "rl").map((l) => l.weight_norm);
    assert.equal(norms[1], undefined, "a non-finite norm is not logged");
    assert.ok(Number.isFinite(norms[2]) && norms[2] !== norms[0], "step 3 trained on from step 1's weights");
    await Deno.stat(`${run}/checkpoints/final`);
    // Every step diverging: 3 rolled back of 3, nothing learnt, exit 2 and no final.
    const every = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/e`,
      ...budget(dir),
      "actor.lr=1e6",
      "trainer.total_steps=3",
    ]);
    assert.equal(every.code, 2, every.err);
    assert.match(every.err, /diverged at RL step 3: all 3 RL steps that updated the weights diverged and were rolled/);
    assert.equal(lines(`${dir}/e/metrics.jsonl`).filter((l) => l.phase === "rl_rollback").length, 3);
    await assert.rejects(Deno.stat(`${dir}/e/checkpoints/final`));
    // Past the budget: the second divergence with max_rollbacks=1 stops the run.
    const spent = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      `${dir}/s`,
      ...budget(dir),
      "actor.lr=1e6",
      "trainer.total_steps=3",
      "trainer.max_rollbacks=1",
    ]);
    assert.equal(spent.code, 2, spent.err);
    assert.match(
      spent.err,
      /diverged at RL step 2: .*1 diverged steps were rolled back before it \(trainer\.max_rollb/,
    );
    await assert.rejects(Deno.stat(`${dir}/s/checkpoints/final`));
  },
});

Deno.test({
  name: "SFT: a step left non-finite and a loss spike are rolled back and the run finishes",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
    const run = `${dir}/d`;
    // Step 2's update leaves NaN weights; step 20's batch is scrambled tokens, whose loss is ~1.5 × the running median
    // where healthy steps stay under 1.1 ×.
    const r = await runCli([
      "train",
      "textcraft",
      "--run-dir",
      run,
      ...budget(dir),
      "sft.enabled=true",
      "sft.epochs=0.2",
      "sft.batch_tokens=1024",
      "sft.lr=0.05",
      "trainer.total_steps=1",
      "trainer.loss_spike_factor=1.3",
      // A random model's losses sit near the uniform 7.6 nats, so the scrambled batch rises about 3 nats, not 5.
      "trainer.loss_spike_rise=1",
    ], { env: { CRUCIBLE_DIVERGE_AT: "sft step 2", CRUCIBLE_SPIKE_AT: "sft step 20" } });
    assert.equal(r.code, 0, r.err);
    const m = lines(`${run}/metrics.jsonl`);
    const rolled = m.filter((l) => l.phase === "sft_rollback");
    assert.deepEqual(rolled.map((l) => [l.step, l.rollbacks]), [[2, 1], [20, 2]]);
    assert.match(rolled[0].why, /no longer finite/);
    assert.match(
      rolled[1].why,
      /the loss [\d.]+ is 1\.[4-9]\d* × the median [\d.]+ of the last 18 steps \(trainer\.loss_spike/,
    );
    const sft = m.filter((l) => l.phase === "sft");
    assert.ok(sft.length > 20 && sft.every((l, i) => l.step === i + 1), "every step logged, the run went on");
    assert.match(r.out, /SFT step 20 diverged \(the loss/);
    assert.ok(m.some((l) => l.phase === "rl"), "RL ran after SFT");
  },
});
