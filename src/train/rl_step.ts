/**
 * One RL training step, read top to bottom in rlStep: `train_batch_size` prompts × `n` samples played as rollouts
 * (here or by a rollout source), stale and failed episodes set apart, the configured advantage estimator
 * (src/rl/estimators.ts) over the trainable ones, behaviour and reference log-probabilities, then the critic's and
 * the policy's updates (src/update/). Episodes that hit an environment failure are left out of the advantages and the
 * update, and counted; the step's numbers are step_metrics.ts's.
 */
import type { RunConfig } from "../config/schema.ts";
import type { Generator } from "../model/generate.ts";
import type { Critic, CriticStep } from "../update/critic.ts";
import type { Transformer } from "../model/transformer.ts";
import { type EpisodeSpec, type RolloutContext, type RolloutOptions, runRollouts } from "../rollout/agent.ts";
import { roundsAt, scheduleOf } from "../rl/rounds.ts";
import { episodeTurns, trainable, type Trajectory } from "../rollout/trajectory.ts";
import { advantageEstimator } from "../rl/estimators.ts";
import { faultPoint } from "./faults.ts";
import { logprobTemperature } from "../util/temperature.ts";
import { rolloutOptions } from "../rollout/options.ts";
import { boundStaleness, type StalenessRule, tisMetrics, tisWeights } from "../rl/off_policy.ts";
import { type ResolvedPolicyLoss, resolvePolicyLoss } from "../rl/policy_loss.ts";
import type { Learner } from "../update/learner.ts";
import type { AdamW } from "../update/optimizer.ts";
import { type MiniBatchResult, rlUpdate, type UpdateSequence } from "../update/rl_update.ts";
import { fromPositions, sequenceLogprobs } from "../update/sequences.ts";
import type { PlayedStep, RolloutSource } from "./types.ts";
import type { AdvantageEstimator, EstimatorInput } from "../rl/advantages.ts";

/** What a step works with. */
export interface RlStepContext {
  /** The run's configuration. */
  config: RunConfig;
  /** Where episodes are played in this process: the sampler, tokenizer, environment client and task. */
  rollout: RolloutContext;
  /** The policy being trained, with its gradient buffers. */
  learner: Learner;
  /** The frozen reference policy for the KL loss, if used. */
  reference?: Transformer;
  /** PPO's critic (algorithm.adv_estimator=gae). */
  critic?: Critic;
  /** The policy's optimizer. */
  opt: AdamW;
  /** Ids that end an assistant turn. */
  stopIds: number[];
  /** Learning rate by 1-based optimizer step. */
  lr: (optimizerStep: number) => number;
  /** Called as each episode played here ends (progress bars). */
  onEpisode?: (t: Trajectory) => void;
  /** Where the step's episodes are played; absent: in this process, on the learner's own weights. */
  source?: RolloutSource;
  /** The run's staleness rule (Run.staleness): what a source's rollouts are bounded by. */
  staleness: StalenessRule;
}

/** A step's outcome: its trajectories and the numbers of its update. */
export interface RlStepResult {
  /** Every episode the step played (stale ones dropped). */
  trajectories: Trajectory[];
  /** True when most episodes failed in the environment: no update was made and the step does not count. */
  aborted?: boolean;
  /** The critic's updates (PPO with GAE). */
  critic?: CriticStep[];
  /** The round limit of the step (the schedule's). */
  rounds: number;
  /** One result per optimizer step of the policy. */
  updates: MiniBatchResult[];
  /** Numbers beside the update's: off-policy corrections and a rollout source's own. */
  extra?: Record<string, number>;
  /** Wall time per phase; the rollout's splits into prefill, decode and waiting for the environment. */
  seconds: { rollout: number; prefill: number; decode: number; env: number; logprobs: number; update: number };
}

/** Seed of episode k of step `step`: distinct per episode, and the same after a resume. */
export function episodeSeed(base: number, step: number, k: number): number {
  return (Math.imul(base, 1000003) + Math.imul(step, 7919) + k) | 0;
}

/** The episodes of a step: rollout.n per prompt, each with its own seed. */
export function stepSpecs(c: RunConfig, step: number, prompts: readonly number[]): EpisodeSpec[] {
  const n = c.rollout.n;
  return prompts.flatMap((task, g) =>
    Array.from({ length: n }, (_, k) => ({ task, group: g, seed: episodeSeed(c.trainer.seed, step, g * n + k) }))
  );
}

/** Plays and learns from one step's prompts. */
export async function rlStep(ctx: RlStepContext, step: number, prompts: readonly number[]): Promise<RlStepResult> {
  const c = ctx.config;
  const rounds = roundsAt(scheduleOf(c.algorithm.rounds_ctrl), step);
  const t0 = performance.now();
  const specs = stepSpecs(c, step, prompts);
  const played = ctx.source
    ? await ctx.source.play(step, specs, rolloutOptions(c, rounds, ctx.stopIds))
    : await playHere(ctx, specs, rolloutOptions(c, rounds, ctx.stopIds));
  const t1 = performance.now();
  const phase = { rollout: (t1 - t0) / 1000, ...played.seconds };
  const extra = { ...played.metrics };
  let trajectories = played.trajectories;
  if (trajectories.some((t) => t.version !== undefined)) {
    const split = boundStaleness(trajectories, step, ctx.staleness);
    trajectories = split.kept;
    extra.stale_dropped = (extra.stale_dropped ?? 0) + split.dropped.length;
    for (const [k, n] of split.histogram) extra[`staleness_${k}`] = n;
  }
  faultPoint(`rl rollout ${step}`);
  const failed = trajectories.filter((t) => t.finish === "env_failure").length;
  if (failed > trajectories.length / 2) {
    return {
      trajectories,
      rounds,
      updates: [],
      aborted: true,
      extra,
      seconds: { ...phase, logprobs: 0, update: 0 },
    };
  }
  const train = trajectories.filter(trainable);
  if (train.length === 0) {
    return { trajectories, rounds, updates: [], extra, seconds: { ...phase, logprobs: 0, update: 0 } };
  }
  const seqs = updateSequences(train);
  Object.assign(extra, await estimateAdvantages(ctx, seqs, train));
  await logprobs(ctx, seqs, train, extra);
  const t2 = performance.now();
  const critic = ctx.critic ? await criticUpdates(ctx, seqs) : [];
  // During the critic's warm-up only the critic learns.
  const actorLearns = !ctx.critic || step > c.critic.warmup_steps;
  const updates = actorLearns ? await actorUpdate(ctx, seqs) : [];
  const t3 = performance.now();
  faultPoint(`rl update ${step}`);
  return {
    trajectories,
    rounds,
    updates,
    critic,
    extra,
    seconds: { ...phase, logprobs: (t2 - t1) / 1000, update: (t3 - t2) / 1000 },
  };
}

/** Plays the episodes in this process, on the learner's generator. */
async function playHere(
  ctx: RlStepContext,
  specs: readonly EpisodeSpec[],
  o: RolloutOptions,
): Promise<PlayedStep> {
  const g = ctx.rollout.generator as Partial<Generator>, before = { ...g.timing };
  const timing = { envSeconds: 0 };
  const trajectories = await runRollouts(ctx.rollout, specs, { ...o, onEpisode: ctx.onEpisode, timing });
  return {
    trajectories,
    seconds: {
      prefill: (g.timing?.prefillSeconds ?? 0) - (before.prefillSeconds ?? 0),
      decode: (g.timing?.decodeSeconds ?? 0) - (before.decodeSeconds ?? 0),
      env: timing.envSeconds,
    },
    metrics: {},
  };
}

/** The trainable episodes as update sequences: tokens, masks and the sampler's log-probabilities. */
function updateSequences(train: readonly Trajectory[]): UpdateSequence[] {
  return train.map((t) => ({
    ids: [...t.promptIds, ...t.responseIds],
    promptLength: t.promptIds.length,
    mask: t.mask,
    group: t.group,
    advantages: [],
    oldLogp: t.logprobs,
  }));
}

/**
 * Fills each sequence's advantages by the configured estimator; with a critic, its old values and returns. Returns the
 * estimator's own numbers of the step (GiGPO's step groups), for the step's metrics.
 */
async function estimateAdvantages(
  ctx: RlStepContext,
  seqs: UpdateSequence[],
  train: readonly Trajectory[],
): Promise<Record<string, number>> {
  const c = ctx.config;
  const estimator = advantageEstimator(c.algorithm.adv_estimator);
  if (estimator.critic && !ctx.critic) {
    throw new RangeError(`algorithm.adv_estimator=${estimator.name} needs a critic`);
  }
  // The critic values each response token from the state before it; its estimator runs over the trainable tokens.
  const values = estimator.critic ? await ctx.critic!.values(seqs) : undefined;
  const estimated = estimator.estimate({ ...advantageInput(c, train, estimator), values }, c.algorithm);
  seqs.forEach((q, i) => (q.advantages = estimated.advantages[i]));
  if (values) {
    if (!estimated.returns) throw new TypeError(`${estimator.name} trains a critic but gave it no returns`);
    seqs.forEach((q, i) => Object.assign(q, { oldValues: values[i], returns: estimated.returns![i] }));
  }
  return estimated.metrics ?? {};
}

/**
 * Behaviour log-probabilities recomputed by the learner (actor.recompute_old_logprob), truncated importance weights
 * on the advantages (actor.tis_cap, its numbers into `extra`) and the reference policy's log-probabilities.
 */
async function logprobs(
  ctx: RlStepContext,
  seqs: UpdateSequence[],
  train: readonly Trajectory[],
  extra: Record<string, number>,
): Promise<void> {
  const c = ctx.config;
  const lp = { temperature: logprobTemperature(c.rollout.temperature), maxTokens: c.actor.ppo_micro_batch_tokens };
  if (c.actor.recompute_old_logprob) {
    const old = await sequenceLogprobs(ctx.learner.gpu, ctx.learner.model, seqs, lp);
    seqs.forEach((q, i) => (q.oldLogp = fromPositions(q, old[i])));
  }
  if (c.actor.tis_cap !== null) {
    // The schema ties tis_cap to recompute_old_logprob: oldLogp is the learner's, t.logprobs the sampler's.
    const w = tisWeights(
      seqs.map((q) => q.oldLogp),
      train.map((t) => t.logprobs),
      seqs.map((q) => q.mask),
      c.actor.tis_cap,
    );
    seqs.forEach((q, i) => (q.advantages = q.advantages.map((a, j) => a * w.weights[i][j])));
    Object.assign(extra, tisMetrics(w));
  }
  if (ctx.reference) {
    const ref = await sequenceLogprobs(ctx.learner.gpu, ctx.reference, seqs, lp);
    seqs.forEach((q, i) => (q.refLogp = fromPositions(q, ref[i])));
  }
}

/**
 * What an advantage estimator sees of the trainable trajectories: their scores, groups and masks, and for one that
 * credits each turn, each turn's tokens, reward and anchor.
 */
function advantageInput(
  c: Pick<RunConfig, "algorithm">,
  train: readonly Trajectory[],
  estimator: AdvantageEstimator,
): EstimatorInput {
  return {
    scores: train.map((t) => advantageScore(c, t)),
    groups: train.map((t) => t.group),
    masks: train.map((t) => t.mask),
    ...(estimator.turns ? { turns: train.map(episodeTurns) } : {}),
  };
}

/**
 * Per-response-token advantages of the trainable trajectories (the reward sits on the last sampled token), by the
 * configured estimator; one that needs a critic's values (gae) is refused: the RL step computes those.
 */
export function tokenAdvantages(c: Pick<RunConfig, "algorithm">, train: readonly Trajectory[]): number[][] {
  const estimator = advantageEstimator(c.algorithm.adv_estimator);
  if (estimator.critic) {
    throw new RangeError(`${estimator.name}'s advantages need the critic's values: they are computed in the RL step`);
  }
  return estimator.estimate(advantageInput(c, train, estimator), c.algorithm).advantages;
}

/**
 * What the advantages see of an episode: its reward, less algorithm.round_penalty for each round when it succeeded
 * (a failure keeps its reward, so fewer rounds never make a failure look better).
 */
export function advantageScore(c: Pick<RunConfig, "algorithm">, t: Pick<Trajectory, "reward" | "success" | "rounds">) {
  const reward = t.reward ?? 0;
  return t.success ? reward - c.algorithm.round_penalty * t.rounds : reward;
}

/** The critic's updates: ppo_epochs passes over mini-batches of ppo_mini_batch_size prompts, as the actor's. */
async function criticUpdates(ctx: RlStepContext, seqs: readonly UpdateSequence[]): Promise<CriticStep[]> {
  const a = ctx.config.actor, out: CriticStep[] = [];
  const groups = [...new Set(seqs.map((q) => q.group))];
  for (let epoch = 0; epoch < a.ppo_epochs; epoch++) {
    for (let g0 = 0; g0 < groups.length; g0 += a.ppo_mini_batch_size) {
      const chosen = new Set(groups.slice(g0, g0 + a.ppo_mini_batch_size));
      const mini = seqs.filter((q) => chosen.has(q.group));
      out.push(
        await ctx.critic!.update(
          mini,
          mini.map((q) => q.oldValues!),
          mini.map((q) => q.returns!),
          ctx.config.critic.lr,
        ),
      );
    }
  }
  return out;
}

/**
 * The actor's loss settings from the config (whose schema holds every default), the KL term only with a reference
 * policy: read once per RL step and resolved before the update hands them down.
 *
 * @example
 * ```ts
 * actorLoss(RunConfig.parse({}), true).settings.clipHigh; // 0.2, the schema's default
 * ```
 */
export function actorLoss(config: RunConfig, withReference: boolean): ResolvedPolicyLoss {
  const a = config.actor;
  return resolvePolicyLoss({
    loss: a.policy_loss,
    clipLow: a.clip_ratio_low,
    clipHigh: a.clip_ratio_high,
    clipC: a.clip_ratio_c,
    klKind: withReference ? a.kl_loss_type : "none",
    klCoef: withReference ? a.kl_loss_coef : 0,
    entropyCoef: a.entropy_coeff,
  });
}

/** The actor's update with the step's loss settings. */
function actorUpdate(ctx: RlStepContext, seqs: readonly UpdateSequence[]): Promise<MiniBatchResult[]> {
  const a = ctx.config.actor;
  return rlUpdate(ctx.learner, ctx.opt, {
    seqs,
    ppoEpochs: a.ppo_epochs,
    miniBatchGroups: a.ppo_mini_batch_size,
    microBatchTokens: a.ppo_micro_batch_tokens,
    lossAggMode: a.loss_agg_mode,
    temperature: logprobTemperature(ctx.config.rollout.temperature),
    lr: ctx.lr,
    loss: actorLoss(ctx.config, ctx.reference !== undefined),
  });
}
