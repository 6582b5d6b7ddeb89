/**
 * A step's numbers: one JSON line of metrics.jsonl from an RL step's result (rl_step.ts), with the prompt groups'
 * rewards that signal sampling and the report read. A number the step did not measure is absent, never 0.
 */
import type { Trajectory } from "../rollout/trajectory.ts";
import type { CriticStep } from "../update/critic.ts";
import type { MiniBatchResult } from "../update/rl_update.ts";
import type { RlStepResult } from "./rl_step.ts";

/** The critic's numbers of a step (verl's names), when there is a critic. */
function criticMetrics(steps: readonly CriticStep[]): Record<string, number> {
  if (steps.length === 0) return {};
  const mean = (f: (s: CriticStep) => number) => steps.reduce((a, s) => a + f(s), 0) / steps.length;
  return {
    value_loss: mean((s) => s.valueLoss),
    vf_clipfrac: mean((s) => s.clipfrac),
    critic_grad_norm: mean((s) => s.gradNorm),
  };
}

/**
 * The share of prompt groups whose episodes do not all earn the same reward: GRPO's signal (a group of equal
 * rewards has every advantage 0 and teaches nothing); undefined when no group has a scored episode.
 */
export function signalShare(ts: readonly Trajectory[]): number | undefined {
  const scored = groupRewards(ts).filter((g) => g.rewards.length > 0);
  if (scored.length === 0) return undefined;
  return scored.filter((g) => new Set(g.rewards).size > 1).length / scored.length;
}

/** A prompt group's task, the rewards of its episodes and what the environment said about the task at reset. */
export interface GroupRewards {
  task: number;
  rewards: number[];
  /** The first of its episodes' `taskInfo` (BFCL: the entry's id, category and classes), where one was given. */
  info?: Readonly<Record<string, unknown>>;
}

/**
 * Each prompt group's task and the rewards of its episodes that have one (an environment failure or a prompt
 * overflow has none), with the task's info from the first episode that brought one.
 */
export function groupRewards(ts: readonly Trajectory[]): GroupRewards[] {
  const out = new Map<number, GroupRewards>();
  for (const t of ts) {
    const g = out.get(t.group) ?? out.set(t.group, { task: t.task, rewards: [] }).get(t.group)!;
    if (t.reward !== null) g.rewards.push(t.reward);
    if (t.taskInfo && !g.info) g.info = t.taskInfo;
  }
  return [...out.values()];
}

/** Whether an episode has a score: neither an environment failure nor a prompt overflow. */
function scored(t: Trajectory): boolean {
  return t.finish !== "env_failure" && t.finish !== "prompt_overflow";
}

function mean(xs: readonly number[]): number | undefined {
  return xs.length === 0 ? undefined : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** How a step's metrics are split. */
export interface StepMetricsOptions {
  /** Which task indices are synthetic worlds (data.synthetic_prompts); absent when the run plays none. */
  isWorld?: (task: number) => boolean;
}

/**
 * A step's reward, success and signal by kind of prompt, side by side: `split_*` for the train split's prompts,
 * `synthetic_*` for the synthetic worlds'. Nothing when the step played no world (the step's own numbers are the
 * split's then); a kind's numbers are absent, never 0, when none of its episodes was scored.
 */
export function kindMetrics(
  ts: readonly Trajectory[],
  isWorld: (task: number) => boolean,
): Record<string, number | undefined> {
  if (!ts.some((t) => isWorld(t.task))) return {};
  const out: Record<string, number | undefined> = {};
  for (const [kind, world] of [["split", false], ["synthetic", true]] as const) {
    const ok = ts.filter((t) => scored(t) && isWorld(t.task) === world);
    out[`${kind}_reward_mean`] = mean(ok.map((t) => t.reward ?? 0));
    out[`${kind}_success_rate`] = mean(ok.map((t) => (t.success ? 1 : 0)));
    out[`${kind}_groups_with_signal`] = signalShare(ok);
  }
  return out;
}

/**
 * Step metrics from a step's result (one JSON line of metrics.jsonl, minus time and step). A metric the step did
 * not measure is absent, never 0: the policy metrics when no micro-batch ran (every group's rewards equal, no
 * trainable episode, the critic's warm-up), `kl` without a reference policy, the rates when no episode was scored.
 * `computed_token_share` says what share of the update's weight the policy metrics cover when some micro-batches were
 * skipped (their gradient is exactly 0). With `o.isWorld`, the numbers by kind of prompt (`kindMetrics`) join them.
 */
export function stepMetrics(r: RlStepResult, o: StepMetricsOptions = {}): Record<string, number> {
  const ts = r.trajectories;
  const ok = ts.filter(scored);
  const rewards = ok.map((t) => t.reward ?? 0);
  const mu = mean(rewards);
  const last = r.updates[r.updates.length - 1];
  const sampled = ts.reduce((a, t) => a + t.mask.reduce((x, m) => x + m, 0), 0);
  const allTokens = ts.reduce((a, t) => a + t.promptIds.length + t.responseIds.length, 0);
  const seconds = r.seconds.rollout + r.seconds.logprobs + r.seconds.update;
  const ran = r.updates.filter((u) => u.computed > 0);
  const avg = (f: (u: MiniBatchResult) => number, of = ran) => mean(of.map(f));
  const share = avg((u) => u.computedShare, r.updates);
  const out: Record<string, number | undefined> = {
    reward_mean: mu,
    reward_std: mu === undefined ? undefined : Math.sqrt(mean(rewards.map((x) => (x - mu) ** 2))!),
    success_rate: mean(ok.map((t) => (t.success ? 1 : 0))),
    groups_with_signal: signalShare(ok),
    rounds_max: r.rounds,
    rounds_mean: mean(ok.map((t) => t.rounds)),
    response_length_mean: mean(ts.map((t) => t.responseIds.length)),
    episodes: ts.length,
    env_failures: ts.filter((t) => t.finish === "env_failure").length,
    prompt_overflows: ts.filter((t) => t.finish === "prompt_overflow").length,
    truncated: ts.filter((t) => t.finish === "length").length,
    policy_loss: avg((u) => u.pgLoss),
    kl: avg((u) => u.klLoss, ran.filter((u) => u.withKl)),
    entropy: avg((u) => u.entropy),
    pg_clipfrac: avg((u) => u.pgClipfrac),
    pg_clipfrac_lower: avg((u) => u.pgClipfracLower),
    ppo_kl: avg((u) => u.ppoKl),
    grad_norm: avg((u) => u.gradNorm),
    computed_token_share: share !== undefined && share < 1 ? share : undefined,
    skipped_updates: r.updates.filter((u) => !u.applied).length,
    skipped_microbatches: r.updates.reduce((n, u) => n + u.skipped, 0),
    ...criticMetrics(r.critic ?? []),
    lr: last?.lr,
    sampled_tokens: sampled,
    tokens_per_s: seconds > 0 ? allTokens / seconds : undefined,
    time_rollout_s: r.seconds.rollout,
    time_prefill_s: r.seconds.prefill,
    time_decode_s: r.seconds.decode,
    time_env_s: r.seconds.env,
    time_logprobs_s: r.seconds.logprobs,
    time_update_s: r.seconds.update,
    ...(o.isWorld ? kindMetrics(ts, o.isWorld) : {}),
    ...r.extra,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Record<string, number>;
}
