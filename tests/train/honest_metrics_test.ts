// Honest logs: a step whose update computed nothing logs no policy numbers (absent, not 0) and its line says why; KL
// without a reference policy is absent; a partly skipped update names the share it covers; evaluation lines name the
// tasks they cover; the report's episode counts match rollouts.jsonl. No GPU: step results are built by hand.
import assert from "node:assert/strict";
import type { Trajectory } from "../../src/rollout/trajectory.ts";
import { coverage } from "../../src/train/eval.ts";
import { stepLine } from "../../src/train/phases.ts";
import { readRun } from "../../src/report/data.ts";
import type { RlStepResult } from "../../src/train/rl_step.ts";
import type { MiniBatchResult } from "../../src/update/rl_update.ts";
import { writeTrainRun } from "../report/report_fixture.ts";
import { stepMetrics } from "../../src/train/step_metrics.ts";

function episode(group: number, reward: number | null, finish: Trajectory["finish"] = "done"): Trajectory {
  return {
    task: group,
    group,
    seed: 0,
    promptIds: [1, 2, 3],
    responseIds: [4, 5],
    mask: [1, 1],
    logprobs: [-1, -1],
    reward,
    success: reward === 1,
    rounds: 2,
    finish,
    firstObservation: "",
    turns: [],
  };
}

function update(o: Partial<MiniBatchResult>): MiniBatchResult {
  return {
    loss: 0,
    pgLoss: 0,
    klLoss: 0,
    entropy: 0,
    pgClipfrac: 0,
    pgClipfracLower: 0,
    ratioMean: 0,
    ppoKl: 0,
    tokens: 0,
    gradNorm: 0,
    applied: true,
    lr: 1e-6,
    skipped: 0,
    computed: 1,
    withKl: false,
    computedShare: 1,
    ...o,
  };
}

const seconds = { rollout: 2, prefill: 0.5, decode: 1, env: 0.5, logprobs: 0.2, update: 0.3 };
const POLICY = ["policy_loss", "kl", "entropy", "pg_clipfrac", "pg_clipfrac_lower", "ppo_kl", "grad_norm"];

Deno.test("a step whose groups all had equal rewards logs no policy numbers, and its line says why", () => {
  const r: RlStepResult = {
    trajectories: [episode(0, 1), episode(0, 1), episode(1, 0), episode(1, 0)],
    rounds: 4,
    // The optimizer stepped (its moments move the weights) but every micro-batch was skipped.
    updates: [update({ computed: 0, skipped: 2, computedShare: 0 })],
    seconds,
  };
  const m = stepMetrics(r);
  for (const k of POLICY) assert.ok(!(k in m), `${k} is logged as ${m[k]} though nothing computed it`);
  assert.equal(m.groups_with_signal, 0);
  assert.equal(m.reward_mean, 0.5);
  assert.equal(m.skipped_microbatches, 2);
  assert.equal(m.lr, 1e-6, "an optimizer step was taken, at this rate");
  const line = stepLine(3, 10, m);
  assert.doesNotMatch(line, /loss|entropy|grad/);
  assert.match(line, /no policy update computed \(every group's rewards were equal/);
  assert.doesNotMatch(JSON.stringify(m), /NaN|null/);
});

Deno.test("a step with no scored episode and no update logs neither rates nor policy numbers", () => {
  const r: RlStepResult = {
    trajectories: [episode(0, null, "env_failure"), episode(0, null, "env_failure")],
    rounds: 4,
    updates: [],
    aborted: true,
    seconds: { ...seconds, logprobs: 0, update: 0 },
  };
  const m = stepMetrics(r);
  for (const k of [...POLICY, "reward_mean", "reward_std", "success_rate", "groups_with_signal", "rounds_mean", "lr"]) {
    assert.ok(!(k in m), `${k} is logged as ${m[k]}`);
  }
  assert.equal(m.env_failures, 2);
  assert.match(stepLine(1, 2, m), /reward – {2}success – {2}rounds –\/4 {2}no policy update computed \(no episode/);
});

Deno.test("KL is absent without a reference policy; a partly skipped update names the share its numbers cover", () => {
  const base: RlStepResult = {
    trajectories: [episode(0, 1), episode(0, 0), episode(1, 1), episode(1, 1)],
    rounds: 4,
    updates: [update({ pgLoss: -0.25, entropy: 1.5, gradNorm: 0.75, skipped: 1, computedShare: 0.5 })],
    seconds,
  };
  const m = stepMetrics(base);
  assert.ok(!("kl" in m));
  assert.deepEqual([m.policy_loss, m.entropy, m.grad_norm, m.computed_token_share], [-0.25, 1.5, 0.75, 0.5]);
  const line = stepLine(2, 10, m);
  assert.match(
    line,
    /loss -0\.2500 {2}entropy 1\.500 \(on 50% of the tokens; the rest had advantage 0\) {2}grad 0\.75/,
  );
  assert.doesNotMatch(line, /kl/);

  const withKl = stepMetrics({ ...base, updates: [update({ withKl: true, klLoss: 0.125, pgLoss: 0.1 })] });
  assert.equal(withKl.kl, 0.125);
  assert.ok(!("computed_token_share" in withKl), "nothing skipped: the numbers cover every token");
  assert.match(stepLine(2, 10, withKl), /loss 0\.1000 {2}kl 0\.1250 {2}entropy 0\.000 {2}grad 0\.00/);
});

Deno.test("an evaluation line names the tasks it covers", () => {
  assert.equal(coverage({ tasks: 20, split: "test", splitTasks: 100 }), "on 20 of 100 test tasks");
  assert.equal(coverage({ tasks: 100, split: "test", splitTasks: 100 }), "on all 100 test tasks");
  assert.equal(coverage({ tasks: 1, splitTasks: undefined }), "on 1 task");
  assert.equal(coverage({ tasks: 64, split: "held-out", splitTasks: undefined }), "on 64 held-out tasks");
  // Episodes never played are left out of the rates, and the line says how many.
  assert.equal(
    coverage({ tasks: 48, splitTasks: 48, overflows: 12, envFailures: 0 }),
    "on all 48 tasks (12 past max_prompt_length: 12 episodes left out)",
  );
  assert.equal(
    coverage({ tasks: 10, split: "test", splitTasks: 100, overflows: 1, envFailures: 2 }),
    "on 10 of 100 test tasks (1 past max_prompt_length and 2 whose environment failed: 3 episodes left out)",
  );
});

Deno.test("the report counts every logged episode, and names by phase those it does not embed", async () => {
  const dir = await Deno.makeTempDir();
  await writeTrainRun(`${dir}/run`);
  const { run } = await readRun(`${dir}/run`);
  const logged = (await Deno.readTextFile(`${dir}/run/rollouts.jsonl`)).trim().split("\n").length;
  assert.equal(run.episodesLogged, logged);
  // The fixture logs three evaluations; the page keeps the first and the last.
  assert.deepEqual(run.episodesLeftOut, { "eval-rl": 4 });
  assert.equal(run.episodes.length + 4, logged);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("synthetic prompts: reward, success and signal by kind side by side, absent (never 0) for a kind not played", () => {
  const world = (group: number, reward: number | null, finish: Trajectory["finish"] = "done") => ({
    ...episode(group, reward, finish),
    task: 1_000_000 + group,
  });
  const isWorld = (task: number) => task >= 1_000_000;
  // Split: group 0 solved once in two (signal); worlds: group 1 solved twice, group 2 once of two (signal), and an
  // environment failure that counts for neither.
  const r: RlStepResult = {
    trajectories: [episode(0, 1), episode(0, 0), world(1, 1), world(1, 1), world(2, 0), world(2, 1), world(3, null)],
    rounds: 4,
    updates: [update({})],
    seconds,
  };
  r.trajectories[6].finish = "env_failure";
  const m = stepMetrics(r, { isWorld });
  assert.equal(m.split_reward_mean, 0.5);
  assert.equal(m.split_success_rate, 0.5);
  assert.equal(m.split_groups_with_signal, 1);
  assert.equal(m.synthetic_reward_mean, 0.75);
  assert.equal(m.synthetic_success_rate, 0.75);
  assert.equal(m.synthetic_groups_with_signal, 0.5);
  assert.equal(m.success_rate, 4 / 6);
  assert.match(
    stepLine(1, 2, m),
    /success 66\.7% {2}\(split reward 0\.500 success 50\.0%; synthetic reward 0\.750 success 75\.0%\) {2}rounds/,
  );
  // A step of worlds only: the split's numbers are absent, not 0; its line says "–".
  const only = stepMetrics({ ...r, trajectories: r.trajectories.slice(2) }, { isWorld });
  for (const k of ["split_reward_mean", "split_success_rate", "split_groups_with_signal"]) assert.ok(!(k in only), k);
  assert.equal(only.synthetic_success_rate, 0.75);
  assert.match(stepLine(1, 2, only), /\(split reward – success –; synthetic reward 0\.750 success 75\.0%\)/);
  // No world played (or the option off): no numbers by kind, and the line as before.
  const plain = stepMetrics({ ...r, trajectories: r.trajectories.slice(0, 2) }, { isWorld });
  assert.deepEqual(Object.keys(plain).filter((k) => /^(split|synthetic)_/.test(k)), []);
  assert.deepEqual(plain, stepMetrics({ ...r, trajectories: r.trajectories.slice(0, 2) }));
  assert.doesNotMatch(stepLine(1, 2, plain), /split|synthetic/);
});
