/**
 * Run folders for the report's tests, written as `deno task train` and `deno task pretrain` write them but with no
 * GPU: a training run (SFT, RL, three evaluations, episodes of two depths, one scalar no chart names) and a
 * pretraining run (losses, held-out success and copy accuracy). Values move with the step so curves are not flat.
 */

/**
 * The RL scalars a training step logs (src/train/rl_step.ts stepMetrics), GiGPO's step groups (src/rl/gigpo.ts), a
 * cluster learner's refusals (all, and by two reasons; src/cluster/admit.ts), plus one the page does not know.
 */
export const RL_KEYS = [
  "reward_mean",
  "reward_std",
  "success_rate",
  "groups_with_signal",
  "rounds_max",
  "rounds_mean",
  "response_length_mean",
  "episodes",
  "env_failures",
  "prompt_overflows",
  "truncated",
  "policy_loss",
  "kl",
  "entropy",
  "pg_clipfrac",
  "pg_clipfrac_lower",
  "ppo_kl",
  "grad_norm",
  "skipped_updates",
  "lr",
  "sampled_tokens",
  "tokens_per_s",
  "time_rollout_s",
  "time_prefill_s",
  "time_decode_s",
  "time_env_s",
  "time_logprobs_s",
  "time_update_s",
  "skipped_microbatches",
  "gigpo_turns_grouped",
  "gigpo_step_group_size",
  "gigpo_step_advantage_share",
  "rejected",
  "rejected_schema",
  "rejected_reward",
  "mystery_metric",
];

/** The keys a step without a computed update leaves out (fixture step 4). */
export const POLICY_KEYS = ["policy_loss", "kl", "entropy", "pg_clipfrac", "pg_clipfrac_lower", "ppo_kl", "grad_norm"];

/** A word that occurs in exactly one episode of the training run (task 2 of the final evaluation, solved). */
export const UNIQUE_WORD = "zebrawood";

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + minutes * 60_000).toISOString();
const wave = (k: number, i: number) => 0.5 + 0.5 * Math.sin(1.3 * k + 0.7 * i);

function episode(phase: string, step: number, task: number, success: boolean, word = "planks") {
  return {
    phase,
    step,
    task,
    group: task,
    reward: success ? 1 : 0,
    success,
    finish: success ? "done" : "max_rounds",
    rounds: 2,
    responseTokens: 24,
    first: `Crafting commands:\ncraft 1 oak ${word} using 1 oak log\n\nGoal: craft oak ${word}.`,
    turns: [
      {
        text: "Thought: I need a log.\nAction: get 1 oak log",
        action: "get 1 oak log",
        observation: "Got 1 oak log",
        reward: 0,
      },
      {
        text: `Thought: now craft.\nAction: craft 1 oak ${word} using 1 oak log`,
        action: `craft 1 oak ${word} using 1 oak log`,
        observation: success ? `Crafted 1 minecraft:oak_${word}` : "Could not find enough items",
        reward: success ? 1 : 0,
      },
    ],
    conversation: "<|im_start|>user ... (left out of the report)",
  };
}

function evaluation(phase: string, step: number, avg: number) {
  const perTask = [0, 1, 2, 3].map((task) => ({
    task,
    category: task < 2 ? "depth 1" : "depth 2",
    successes: task < 4 * avg ? 1 : 0,
    episodes: 1,
  }));
  const rate = (c: string) => {
    const rows = perTask.filter((r) => r.category === c);
    const a = rows.reduce((s, r) => s + r.successes, 0) / rows.length;
    return { tasks: rows.length, episodes: rows.length, avg: a, pass: a, meanReward: a };
  };
  return {
    phase,
    step,
    time: at(step),
    tasks: 4,
    split: "test",
    splitTasks: 10,
    episodes: 4,
    avg,
    pass: avg,
    meanReward: avg,
    samples: 1,
    envFailures: 0,
    byCategory: { "depth 1": rate("depth 1"), "depth 2": rate("depth 2") },
    perTask,
  };
}

/** Writes a training run's folder; `shift` offsets the curves so two runs differ. */
export async function writeTrainRun(dir: string, shift = 0): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/config.yaml`, "task: textcraft\nmodel:\n  tiny: tiny.yaml\n");
  const sft = [1, 2, 3, 4, 5].map((step) => ({
    phase: "sft",
    time: at(step * 0.1),
    step,
    epoch: step / 5,
    loss: 5 / step + shift,
    tokens: 900 + 10 * step,
    targets: 300 + step,
    gradNorm: 2 / step,
    lr: 1e-4 * step,
    applied: true,
  }));
  const rl = Array.from({ length: 12 }, (_, i) => {
    const step = i + 1;
    const line: Record<string, unknown> = { phase: "rl", step, time: at(1 + step * (0.5 + shift)) };
    RL_KEYS.forEach((k, j) => (line[k] = Math.round(1000 * (wave(j, step) + shift)) / 1000));
    const out = { ...line, success_rate: Math.min(1, step / 12), groups_with_signal: 0.5, lr: 1e-5 };
    // Step 4's groups all had equal rewards: the step logs no policy numbers (absent, never 0).
    return step === 4 ? Object.fromEntries(Object.entries(out).filter(([k]) => !POLICY_KEYS.includes(k))) : out;
  });
  await Deno.writeTextFile(`${dir}/metrics.jsonl`, jsonl([...sft, ...rl]));
  await Deno.writeTextFile(
    `${dir}/evals.jsonl`,
    jsonl([evaluation("sft", 0, 0.25), evaluation("rl", 6, 0.5), evaluation("final", 12, 0.75)]),
  );
  const evalEpisodes = (phase: string, step: number, solved: number) =>
    [0, 1, 2, 3].map((t) =>
      episode(phase, step, t, t < solved, phase === "eval-final" && t === 2 ? UNIQUE_WORD : "planks")
    );
  const rlEpisodes = [11, 12].flatMap((step) => [113, 218, 448].map((t, k) => episode("rl", step, t, k === step % 3)));
  await Deno.writeTextFile(
    `${dir}/rollouts.jsonl`,
    jsonl([
      ...evalEpisodes("eval-sft", 0, 1),
      ...evalEpisodes("eval-rl", 6, 2),
      ...evalEpisodes("eval-final", 12, 3),
      ...rlEpisodes,
    ]),
  );
}

/** Writes a pretraining run's folder (metrics, held-out evaluations with copy accuracy, their episodes). */
export async function writePretrainRun(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/config.yaml`, "task: textcraft\npretrain:\n  steps: 20\n");
  const metrics = Array.from({ length: 20 }, (_, i) => ({
    phase: "pretrain",
    step: i + 1,
    time: at(i * 0.2),
    loss: 7 - 0.2 * i,
    tokens: 2100,
    targets: 800 + i,
    gradNorm: 5 - 0.1 * i,
    lr: 1e-5 * (i + 1),
    applied: true,
    task_loss: i === 3 ? null : 7.1 - 0.2 * i,
    copy_loss: 7.5 - 0.3 * i,
  }));
  await Deno.writeTextFile(`${dir}/metrics.jsonl`, jsonl(metrics));
  const evals = [10, 20].map((step) => ({
    ...evaluation("pretrain", step, step / 40),
    copy: { names: step / 25, replies: step / 50, nll: 3 - step / 10 },
  }));
  await Deno.writeTextFile(`${dir}/evals.jsonl`, jsonl(evals));
  await Deno.writeTextFile(
    `${dir}/rollouts.jsonl`,
    jsonl([10, 20].flatMap((step) => [0, 1, 2, 3].map((t) => episode("eval-pretrain", step, t, t === 0)))),
  );
}

/** TRL's metrics of a DPO step (src/update/dpo_update.ts DpoStep) and the rounds' lines of ETO and AgentEvol. */
export const DPO_KEYS = [
  "loss",
  "rewards/chosen",
  "rewards/rejected",
  "rewards/accuracies",
  "rewards/margins",
  "logps/chosen",
  "logps/rejected",
  "pairs",
  "tokens",
  "gradNorm",
  "lr",
  "time_update_s",
];

/** Writes a run that learned in rounds after its warm start: ETO's DPO steps and rounds, and AgentEvol's. */
export async function writePreferenceRun(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/config.yaml`, "task: textcraft\nalgorithm:\n  learner: eto\n");
  const rounds = [1, 2].map((round) => ({
    phase: "dpo_round",
    step: (round - 1) * 6,
    round,
    time: at(round * 3),
    pairs: 40 + 5 * round,
    tasks: 96,
    episodes: 96,
    explore_success_rate: 0.5 + 0.1 * round,
    explore_reward_mean: 0.5 + 0.1 * round,
    experts: 96,
    expert_chosen: 38 + 5 * round,
    explored_chosen: 2,
    no_pair: 51,
    time_explore_s: 20 + round,
    time_reference_s: 9 + round,
  }));
  const dpo = Array.from({ length: 12 }, (_, i) => {
    const step = i + 1;
    const line: Record<string, unknown> = { phase: "dpo", step, round: step > 6 ? 2 : 1, epoch: 0, time: at(step / 2) };
    DPO_KEYS.forEach((k, j) => (line[k] = Math.round(1000 * wave(j, step)) / 1000));
    return { ...line, "rewards/accuracies": Math.min(1, step / 12), applied: true };
  });
  const evolved = Array.from({ length: 6 }, (_, i) => ({
    phase: "agentevol",
    step: i + 1,
    round: i < 3 ? 1 : 2,
    time: at(7 + i),
    epoch: 0,
    loss: 1 / (i + 1),
    tokens: 2000 + i,
    targets: 400 + i,
    gradNorm: 1 + wave(1, i),
    lr: 5e-4,
    applied: true,
    time_update_s: 2 + wave(2, i),
  }));
  const kept = [1, 2].map((round) => ({
    phase: "agentevol_round",
    step: (round - 1) * 3,
    round,
    time: at(6 + round),
    tasks: 374,
    episodes: 374,
    explore_success_rate: 0.6 + 0.05 * round,
    explore_reward_mean: 0.6 + 0.05 * round,
    kept: 220 + 10 * round,
    time_explore_s: 50 + round,
  }));
  await Deno.writeTextFile(`${dir}/metrics.jsonl`, jsonl([...rounds, ...dpo, ...kept, ...evolved]));
  await Deno.writeTextFile(`${dir}/evals.jsonl`, jsonl([evaluation("sft", 0, 0.5), evaluation("final", 12, 0.75)]));
  await Deno.writeTextFile(
    `${dir}/rollouts.jsonl`,
    jsonl([episode("explore", 1, 0, true), episode("explore", 1, 1, false)]),
  );
}
