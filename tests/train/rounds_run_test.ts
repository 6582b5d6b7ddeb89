// The learners in rounds as whole runs on the smoke model: ETO (explore, pair with the oracle, DPO) and AgentEvol
// (keep successes, fine-tune the base) each killed mid-round and resumed give bit-identical final weights; ETO writes
// its pairs in both formats, which DPO on a file (data.preferences) then trains on; a malformed preference file stops
// the run before its folder exists.
import assert from "node:assert/strict";
import { resolveConfig } from "../../src/config/load.ts";
import { loadModelDir } from "../../src/model/model_dir.ts";
import { parsePreferences } from "../../src/train/preferences.ts";
import { runTraining } from "../../src/train/run.ts";
import { noGpu } from "../no_gpu.ts";
import { SMOKE_MODEL_YAML, SMOKE_RUN } from "../../bench/smoke_run.ts";
import type { Reporter } from "../../src/train/types.ts";

const QUIET: Reporter = { bar: () => ({ tick() {}, done() {} }), line() {} };

async function config(dir: string, more: string[]) {
  await Deno.writeTextFile(`${dir}/tiny.yaml`, SMOKE_MODEL_YAML);
  return resolveConfig({ text: "task: textcraft\n", name: "test" }, [
    `model.tiny=${dir}/tiny.yaml`,
    ...SMOKE_RUN,
    "data.prompt_file=null",
    "sft.epochs=0.02",
    "sft.batch_tokens=2048",
    "sft.lr=0.01",
    "trainer.test_freq=1",
    ...more,
  ]);
}

const ETO = [
  "algorithm.learner=eto",
  "eto.iterations=2",
  "eto.tasks=3",
  "eto.extra_turns=1",
  "dpo.lr=0.01",
  "dpo.epochs=1",
  "dpo.batch_pairs=1",
  "dpo.beta=0.5",
];
const AGENTEVOL = [
  "algorithm.learner=agentevol",
  "agentevol.iterations=2",
  "agentevol.tasks=3",
  "agentevol.samples=2",
  "sft.batch_tokens=600",
];

function stopAfter(runDir: string, marker: string) {
  return () => {
    try {
      return Deno.readTextFileSync(`${runDir}/metrics.jsonl`).includes(marker);
    } catch {
      return false;
    }
  };
}

const lines = (path: string) => Deno.readTextFileSync(path).trim().split("\n").map((l) => JSON.parse(l));

async function killAndResume(dir: string, c: Awaited<ReturnType<typeof config>>, marker: string) {
  const straight = `${dir}/straight`;
  const a = await runTraining({
    config: c,
    runDir: straight,
    resume: false,
    reporter: QUIET,
    stopRequested: () => false,
  });
  assert.equal(a.interrupted, false);
  const want = (await loadModelDir(`${straight}/checkpoints/final`)).tensors;
  const run = `${dir}/killed`;
  const b = await runTraining({
    config: c,
    runDir: run,
    resume: false,
    reporter: QUIET,
    stopRequested: stopAfter(run, marker),
  });
  assert.equal(b.interrupted, true);
  const r = await runTraining({ config: c, runDir: run, resume: true, reporter: QUIET, stopRequested: () => false });
  assert.equal(r.interrupted, false);
  const got = (await loadModelDir(`${run}/checkpoints/final`)).tensors;
  for (const [k, v] of want) {
    const g = got.get(k)!;
    const at = v.findIndex((x, i) => !Object.is(x, g[i]));
    assert.ok(g.length === v.length && at < 0, `${k} differs at ${at}: ${g[at]} vs ${v[at]}`);
  }
  // The resumed run's logs are the straight run's, line for line, times and timings aside.
  const timeless = (path: string) =>
    lines(path).map((l) => JSON.stringify(l, (k, v) => (k === "time" || k.startsWith("time_") ? undefined : v)));
  assert.deepEqual(timeless(`${run}/metrics.jsonl`), timeless(`${straight}/metrics.jsonl`));
  return straight;
}

Deno.test({
  name: "ETO: kill mid-round and resume gives bit-identical weights; pairs in both formats; DPO on the pairs file",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir, ETO);
    // Killed after the second round's first DPO step: its pairs and moments come back from the checkpoint.
    const straight = await killAndResume(dir, c, '"phase":"dpo","step":2');
    const metrics = lines(`${straight}/metrics.jsonl`);
    const rounds = metrics.filter((m) => m.phase === "dpo_round");
    assert.deepEqual(rounds.map((m) => m.round), [1, 2]);
    for (const m of rounds) {
      assert.ok(m.pairs === m.expert_chosen + m.explored_chosen && m.tasks === 3, JSON.stringify(m));
    }
    const steps = metrics.filter((m) => m.phase === "dpo");
    assert.ok(steps.length >= 2);
    for (const key of ["loss", "rewards/chosen", "rewards/rejected", "rewards/accuracies", "rewards/margins"]) {
      assert.ok(steps.every((m) => Number.isFinite(m[key])), key);
    }
    const evals = lines(`${straight}/evals.jsonl`).map((e) => e.phase);
    assert.deepEqual(evals, ["sft", "dpo", "final"]);
    const trl = Deno.readTextFileSync(`${straight}/pairs/round-1.trl.jsonl`);
    const agentgym = Deno.readTextFileSync(`${straight}/pairs/round-1.agentgym.jsonl`);
    const pairs = parsePreferences(agentgym, "round-1.agentgym.jsonl");
    assert.equal(pairs.length, rounds[0].pairs);
    assert.deepEqual(
      parsePreferences(trl, "t").map((p) => p.opening),
      pairs.map((p) => p.opening),
    );

    // DPO on the file: one round, no exploration, the same loss.
    const fileRun = `${dir}/file`;
    const f = await config(dir, [
      `data.preferences=${straight}/pairs/round-1.trl.jsonl`,
      "dpo.epochs=1",
      "dpo.batch_pairs=1",
    ]);
    const s = await runTraining({
      config: f,
      runDir: fileRun,
      resume: false,
      reporter: QUIET,
      stopRequested: () => false,
    });
    assert.ok(s.finalEval);
    const fileMetrics = lines(`${fileRun}/metrics.jsonl`);
    assert.deepEqual(fileMetrics.filter((m) => m.phase === "dpo_round").map((m) => [m.round, m.pairs]), [[
      1,
      pairs.length,
    ]]);
    assert.equal(fileMetrics.filter((m) => m.phase === "dpo").length, pairs.length);
    assert.ok(!lines(`${fileRun}/rollouts.jsonl`).some((e) => e.phase === "explore"), "no exploration");

    // A malformed file: one message with file, line and field, and no run folder.
    const bad = `${dir}/bad.jsonl`;
    await Deno.writeTextFile(bad, trl.trim().split("\n")[0] + '\n{"prompt": [], "chosen": [], "rejected": []}\n');
    const b = await config(dir, [`data.preferences=${bad}`]);
    await assert.rejects(
      () =>
        runTraining({ config: b, runDir: `${dir}/never`, resume: false, reporter: QUIET, stopRequested: () => false }),
      new RegExp(`${bad.replace(/[.]/g, "\\.")} line 2: field "prompt" must be a non-empty list`),
    );
    assert.equal(await Deno.stat(`${dir}/never`).then(() => true, () => false), false);
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "AgentEvol: kill mid-round and resume gives bit-identical weights; each round starts from the base",
  ignore: noGpu,
  async fn() {
    const dir = await Deno.makeTempDir();
    const c = await config(dir, AGENTEVOL);
    const straight = await killAndResume(dir, c, '"phase":"agentevol","round":2');
    const metrics = lines(`${straight}/metrics.jsonl`);
    const rounds = metrics.filter((m) => m.phase === "agentevol_round");
    assert.deepEqual(rounds.map((m) => [m.round, m.tasks, m.episodes]), [[1, 3, 6], [2, 3, 6]]);
    const steps = metrics.filter((m) => m.phase === "agentevol");
    // Each round fine-tunes the base anew on the demonstrations (the warm start's data) and its successes.
    const first = (round: number) => steps.find((m) => m.round === round);
    assert.ok(first(1) && first(2));
    assert.deepEqual(steps.map((m) => m.step), steps.map((_, i) => i + 1), "steps count on over the rounds");
    await Deno.remove(dir, { recursive: true });
  },
});
