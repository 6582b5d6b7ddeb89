/**
 * The two phases of a run over one learner: the supervised warm start (`sftPhase`: the task's demonstrations or a
 * trajectory file, then an evaluation and the `sft-final` checkpoint that RL's KL term refers to) and RL
 * (`rlPhase`: steps of rollouts and updates, periodic evaluations and checkpoints, the final evaluation). Each
 * returns false when a stop request interrupted it, after saving a checkpoint to resume from.
 */
import { loadModelDir } from "../model/model_dir.ts";
import { Transformer } from "../model/transformer.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import { FailureBudget, mixText } from "./budget.ts";
import { checkpointName, tidyCheckpoints } from "./checkpoint.ts";
import { coverage } from "./eval.ts";
import { Critic } from "../update/critic.ts";
import { collapsedEntropy, DivergenceGuard } from "./divergence.ts";
import { phaseOptimizer, SkipGuard, trainable } from "../update/learner.ts";
import type { AdamW } from "../update/optimizer.ts";
import { AHEAD_FILE, type AheadRecord, OneStepOff } from "./one_step_off.ts";
import { byCategory, nextPrompts, recordSignal, signalPrompts, withWorlds } from "../rl/prompts.ts";
import { roundsAt, scheduleOf } from "../rl/rounds.ts";
import { divergeAt, Rollbacks, SpikeCheck } from "./rollback.ts";
import { rlStep, type RlStepContext, stepSpecs } from "./rl_step.ts";
import { rolloutOptions } from "../rollout/options.ts";
import { checkEnv, servedCategory } from "./setup.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { lrAt } from "../rl/schedule.ts";
import { advantageEstimator } from "../rl/estimators.ts";
import type { TrainSequence } from "../update/sequences.ts";
import { runSft, sftEpochs, sftPlan } from "./sft.ts";
import { EnvFailed, RunDiverged, RunStopped } from "./stops.ts";
import { agentGymSequences, augmentedEpochs, oracleEpisodes, textEpisode } from "./sft_data.ts";
import { LEARNER_PHASE, type Run } from "./types.ts";
import { learnerOf } from "../config/schema.ts";
import { groupRewards, stepMetrics } from "./step_metrics.ts";

/** Supervised warm start; false when interrupted (a checkpoint `sft-latest` is saved to resume from). */
export async function sftPhase(run: Run): Promise<boolean> {
  const c = run.config, state = run.state;
  const opt = phaseOptimizer(run.learner, c, { weightDecay: c.sft.weight_decay, maxGradNorm: c.sft.grad_clip });
  if (run.resumed?.moments) opt.restore(run.resumed.moments.m, run.resumed.moments.v, run.resumed.state.optimizerStep);
  const epochs = sftEpochs(c.sft.epochs, await sftData(run));
  const plan = { batchTokens: c.sft.batch_tokens, seed: c.trainer.seed };
  const total = sftPlan(epochs, plan).length;
  const bar = run.rep.bar("sft", total);
  bar.tick(state.sftStep);
  const guard = new SkipGuard(c.trainer.max_skipped_steps, "sft.lr", c.sft.lr);
  const norms = new DivergenceGuard(run.learner, c.trainer.max_norm_growth);
  if (state.sftStep < total) await norms.start();
  const rollbacks = new Rollbacks(run.learner.gpu, [opt], c.trainer.max_rollbacks), fromStart = state.sftStep === 0;
  const spikes = new SpikeCheck(c.trainer.loss_spike_factor, { name: "loss", minRise: c.trainer.loss_spike_rise });
  let diverged = false, collapsed: string | undefined;
  await runSft(run.learner, opt, {
    epochs,
    settings: {
      ...plan,
      microBatchTokens: c.actor.ppo_micro_batch_tokens,
      contextWeight: c.sft.context_loss_weight,
      lr: (k: number) => lrAt(c.sft.lr, c.sft.lr_schedule, k, total),
    },
    from: state.sftStep,
    onStep: async (r) => {
      state.sftStep = r.step;
      divergeAt(`sft step ${r.step}`, trainable(run.learner));
      const norm = await norms.check();
      const why = norm.diverged ?? spikes.test(r.loss);
      await run.log.metric({ phase: "sft", time: new Date().toISOString(), ...r, ...normField(norm.norm) });
      bar.tick(1, `loss ${r.loss.toFixed(3)}`);
      if (why) {
        if (!await rollBack(run, { rollbacks, norms }, "sft", r.step, why)) collapsed = spentWhy(why, rollbacks);
        return;
      }
      spikes.accept(r.loss);
      await rollbacks.accepted(r.applied);
      diverged = guard.record(r.applied);
      if (diverged) return;
      if (c.trainer.save_freq > 0 && r.step % c.trainer.save_freq === 0) await saveSft(run, opt);
    },
    stop: () => diverged || collapsed !== undefined || run.stopRequested(),
  });
  if (collapsed) throw divergedError(run, `SFT step ${state.sftStep}`, collapsed, "sft.lr", c.sft.lr);
  if (diverged) {
    await saveSft(run, opt);
    opt.release();
    throw guard.error(lowerLr(run, "sft.lr", c.sft.lr));
  }
  rollbacks.release();
  const undone = fromStart && state.sftStep >= total ? rollbacks.allUndone("SFT") : undefined;
  if (undone) throw divergedError(run, `SFT step ${state.sftStep}`, undone, "sft.lr", c.sft.lr);
  if (state.sftStep < total) {
    await saveSft(run, opt);
    opt.release();
    return false;
  }
  bar.done();
  const sftEval = await evaluateOrStop(run, "sft", 0, () => saveSft(run, opt));
  opt.release();
  state.notes.sftEval = sftEval;
  state.phase = LEARNER_PHASE[learnerOf(c)];
  // LoRA's reference is the base with the adapter off, not a saved checkpoint.
  state.reference = run.learner.model.lora ? null : "checkpoints/sft-final";
  await run.save(undefined, "sft-final");
  run.rep.line(
    `After SFT: test success ${(100 * sftEval.avg).toFixed(1)}% ${coverage(sftEval)}, mean reward ` +
      sftEval.meanReward.toFixed(3),
  );
  return true;
}

/**
 * The stop of a diverged step: nothing of it is saved (no `final`), the last good checkpoint stays the latest, and
 * the message says how to go on from it with a lower learning rate.
 */
function divergedError(run: Run, where: string, why: string, key: string, lr: number): RunDiverged {
  const last = run.lastCheckpoint ?? run.resumed?.dir;
  const from = last
    ? `The latest checkpoint (${last}) is the last good one; resume from it with a lower learning ` +
      `rate: deno task train --resume ${run.dir} ${key}=${lr / 10}`
    : `No checkpoint was saved before it; start again with a lower learning rate (${key}=${lr / 10}).`;
  return new RunDiverged(
    `Training diverged at ${where}: ${why}. The learning rate (${key}=${lr}) is the likely cause. Nothing of this ` +
      `step was saved and no final checkpoint was written. ${from}`,
  );
}

/**
 * Undoes a diverged step when the phase's rollback budget allows: the weights and optimizer state from before it are
 * back, a `<phase>_rollback` line is written to metrics.jsonl, and the run goes on with the next batch. False, with
 * nothing done, when the budget is spent.
 */
async function rollBack(
  run: Run,
  o: { rollbacks: Rollbacks; norms: DivergenceGuard },
  phase: "sft" | "rl",
  step: number,
  why: string,
): Promise<boolean> {
  if (!await o.rollbacks.undo()) return false;
  o.norms.rolledBack();
  const { count, limit, bytes } = o.rollbacks;
  await run.log.metric({
    phase: `${phase}_rollback`,
    step,
    time: new Date().toISOString(),
    why,
    rollbacks: count,
    max_rollbacks: limit,
    copy_bytes: bytes,
  });
  run.rep.line(
    `${phase.toUpperCase()} step ${step} diverged (${why}): rolled back to the weights and optimizer state before ` +
      `it and its batch skipped (rollback ${count} of ${limit}, trainer.max_rollbacks).`,
  );
  return true;
}

/** Why a run stops at a divergence its rollback budget no longer covers. */
function spentWhy(why: string, rollbacks: Rollbacks): string {
  if (rollbacks.limit === 0) return why;
  return `${why}; ${rollbacks.count} diverged steps were rolled back before it (trainer.max_rollbacks=` +
    `${rollbacks.limit})`;
}

/** The weights' norm as a metrics field, when it is finite (a non-finite one is said in the stop's message). */
function normField(norm: number | undefined): { weight_norm?: number } {
  return norm !== undefined && Number.isFinite(norm) ? { weight_norm: norm } : {};
}

function lowerLr(run: Run, key: string, lr: number): string {
  return `A checkpoint was saved; resume with a lower one: deno task train --resume ${run.dir} ${key}=${lr / 10}`;
}

/** An SFT step checkpoint; only the newest is kept (SFT's periodic saves are for resuming, not for keeping). */
async function saveSft(run: Run, opt: AdamW): Promise<void> {
  await run.save(opt, checkpointName("sft", run.state.sftStep));
  await tidyCheckpoints(run.dir, { prefix: "sft" });
}

/** The SFT data of each epoch: the task's demonstrations (rewritten per epoch as it asks) or a trajectory file. */
export async function sftData(run: Run): Promise<(epoch: number) => TrainSequence[]> {
  const c = run.config, { task, options, client } = run.env, tokenizer = run.host.tokenizer;
  const stopId = run.host.stopIds[0];
  if (c.sft.data !== "oracle") {
    const seqs = agentGymSequences(await Deno.readTextFile(c.sft.data), tokenizer, stopId, c.sft.data);
    return () => seqs;
  }
  const played = await oracleEpisodes({ tokenizer, client, task, stopId }, run.train, {
    options,
    maxPromptLength: c.rollout.max_prompt_length,
    maxResponseLength: c.rollout.max_response_length,
    retries: c.env.episode_retries,
    onSkipped: (n) => n > 0 && run.rep.line(`SFT: ${n} oracle plans do not fit max_response_length and are left out`),
    onUnplanned: (n) =>
      n > 0 &&
      run.rep.line(
        `SFT: the oracle has no plan that solves ${n} of the ${run.train.length} train tasks; they are left out`,
      ),
  });
  return augmentedEpochs(new ChatRenderer(tokenizer, task.tools?.bind(task)), task.prompt, played.map(textEpisode), {
    stopId,
    seed: c.trainer.seed,
    epochs: c.sft.epochs,
    augment: await task.augment?.(options),
  });
}

/** RL steps, then the final evaluation and checkpoint; false when interrupted (a step checkpoint is saved). */
export async function rlPhase(run: Run): Promise<boolean> {
  const c = run.config, state = run.state;
  const opt = await rlOptimizer(run);
  const stepsTotal = c.trainer.total_steps;
  const optimizerStepsTotal = stepsTotal * c.actor.ppo_epochs *
    Math.ceil(c.data.train_batch_size / c.actor.ppo_mini_batch_size);
  run.critic = advantageEstimator(c.algorithm.adv_estimator).critic ? await startCritic(run) : undefined;
  if (!run.source && run.staleness.k > 0 && state.rlStep < stepsTotal) run.source = await oneStepOff(run);
  const ctx: RlStepContext = {
    config: c,
    rollout: run.rollout,
    learner: run.learner,
    critic: run.critic,
    reference: await referenceModel(run),
    opt,
    stopIds: run.host.stopIds,
    lr: (k) => lrAt(c.actor.lr, c.actor.lr_schedule, k, optimizerStepsTotal),
    source: run.source,
    staleness: run.staleness,
  };
  const sampling = c.data.prompt_sampling;
  // The run refused "signal" at its start for a task without categories. Categories follow what the servers serve.
  const category = sampling.type === "signal" ? servedCategory(run.rollout.task, run.served) : undefined;
  const groups = category && byCategory(run.train, (i) => category(i));
  // data.synthetic_prompts: this many of each step's prompts are the task's fresh worlds, the rest the split's.
  const worlds = run.env.worlds;
  const isWorld = worlds && ((task: number) => task >= worlds.first);
  const worldCount = worlds ? Math.round(c.data.synthetic_prompts.share * c.data.train_batch_size) : 0;
  const fromSplit = c.data.train_batch_size - worldCount;
  const splitPrompts = (step: number) =>
    groups
      ? signalPrompts(groups, fromSplit, c.trainer.seed, step, sampling.floor, state.data, sampling.balance)
      : nextPrompts(run.train, fromSplit, c.trainer.seed, state.data);
  const prompts = (step: number) =>
    worlds ? withWorlds(splitPrompts(step), { worlds: worldCount, step, first: worlds.first }) : splitPrompts(step);
  const bar = run.rep.bar("rl", stepsTotal);
  bar.tick(state.rlStep);
  const stepName = () => checkpointName("rl", state.rlStep);
  const guard = new SkipGuard(c.trainer.max_skipped_steps, "actor.lr", c.actor.lr);
  const norms = new DivergenceGuard(run.learner, c.trainer.max_norm_growth);
  if (state.rlStep < stepsTotal) await norms.start();
  const optimizers = run.critic ? [opt, run.critic.opt] : [opt];
  const rollbacks = new Rollbacks(run.learner.gpu, optimizers, c.trainer.max_rollbacks), fromStart = state.rlStep === 0;
  let firstEntropy: number | undefined;
  const budget = new FailureBudget({
    maxStepRetries: c.env.max_step_retries,
    maxAbandoned: c.env.max_abandoned_steps,
    outageMs: c.env.outage_minutes * 60_000,
  });
  const ahead = aheadOf(run, prompts);
  while (state.rlStep < stepsTotal && !run.stopRequested()) {
    const step = state.rlStep + 1;
    const position = structuredClone(state.data);
    const r = await rlStep(ctx, step, ahead ? await ahead(step) : prompts(step));
    if (r.aborted) {
      // Most episodes failed in the environment: the step does not count; the same prompts run again once it is back
      // (drawn again from the same position, or kept in state.ahead when drawn ahead).
      if (!ahead) state.data = position;
      await abandonStep(run, budget, step, r.trajectories, () => run.save(opt, stepName()));
      continue;
    }
    budget.counted();
    state.rlStep = step;
    if (state.ahead) {
      delete state.ahead[step];
      if (Object.keys(state.ahead).length === 0) delete state.ahead;
    }
    if (category) {
      const played = groupRewards(r.trajectories);
      recordSignal(state.data, isWorld ? played.filter((g) => !isWorld(g.task)) : played, category);
    }
    const m = stepMetrics(r, { isWorld });
    if (r.updates.length > 0) divergeAt(`rl update ${step}`, trainable(run.learner));
    const norm = r.updates.length > 0 ? await norms.check() : undefined;
    await run.log.metric({ phase: "rl", step, time: new Date().toISOString(), ...m, ...normField(norm?.norm) });
    // A rolled-back step's entropy and skips went with it; its episodes are still logged and the step counts.
    const rolled = norm?.diverged !== undefined && await rollBack(run, { rollbacks, norms }, "rl", step, norm.diverged);
    if (norm?.diverged && !rolled) {
      throw divergedError(run, `RL step ${step}`, spentWhy(norm.diverged, rollbacks), "actor.lr", c.actor.lr);
    }
    if (r.updates.length > 0 && !rolled) {
      // The entropy is measured by the update on the weights it starts from: a collapse it sees came from an earlier
      // step, which undoing this one cannot reach, so it stops the run at once.
      firstEntropy ??= m.entropy;
      const uniform = collapsedEntropy(firstEntropy, m.entropy, run.learner.model.config.vocabSize);
      if (uniform) throw divergedError(run, `RL step ${step}`, uniform, "actor.lr", c.actor.lr);
    }
    const applied = r.updates.some((u) => u.applied);
    if (r.updates.length > 0 && !rolled && guard.record(applied)) {
      await run.save(opt, stepName());
      throw guard.error(lowerLr(run, "actor.lr", c.actor.lr));
    }
    if (step === stepsTotal && r.updates.length > 0 && !applied) {
      // The weights would be final although they no longer give finite gradients: that is no result.
      const why = "every update of the last step was skipped for a non-finite gradient norm";
      throw divergedError(run, `RL step ${step}`, why, "actor.lr", c.actor.lr);
    }
    if (!rolled) await rollbacks.accepted(r.updates.length > 0 || (r.critic?.length ?? 0) > 0);
    await run.log.rollouts("rl", step, r.trajectories, run.host.tokenizer);
    bar.tick(1, `reward ${fixed(m.reward_mean, 2)} success ${percent(m.success_rate, 0)}`);
    run.rep.line(stepLine(step, stepsTotal, m));
    if (c.trainer.test_freq > 0 && step % c.trainer.test_freq === 0 && step < stepsTotal) {
      await evaluateOrStop(run, "rl", step, () => run.save(opt, stepName()));
    }
    if (c.trainer.save_freq > 0 && step % c.trainer.save_freq === 0) await run.save(opt, stepName());
  }
  rollbacks.release();
  const undone = fromStart && state.rlStep >= stepsTotal ? rollbacks.allUndone("RL") : undefined;
  if (undone) throw divergedError(run, `RL step ${state.rlStep}`, undone, "actor.lr", c.actor.lr);
  if (state.rlStep < stepsTotal) {
    await run.save(opt, stepName());
    return false;
  }
  bar.done();
  state.notes.finalEval = await evaluateOrStop(run, "final", state.rlStep, () => run.save(opt, stepName()));
  await run.save(opt, "final");
  return true;
}

/**
 * With a rollout source that plays ahead and rollout.max_staleness = k > 0: the prompts of a step, after handing the
 * source those of the next k steps (or as many as it takes ahead), so they play while this step updates. The prompts
 * are drawn in step order, as without lookahead, and kept in the trainer state (`ahead`) until their step counts:
 * a resumed run plays the prompts drawn ahead before drawing new ones, so none is skipped.
 */
function aheadOf(
  run: Run,
  prompts: (step: number) => number[],
): ((step: number) => Promise<number[]>) | undefined {
  const c = run.config, source = run.source, state = run.state;
  const k = Math.min(run.staleness.k, source?.ahead ?? Infinity);
  if (!source?.prepare || k === 0) return undefined;
  const draw = (s: number) => {
    const drawn = state.ahead ??= {};
    return drawn[s] ??= prompts(s);
  };
  return async (step) => {
    const mine = draw(step);
    for (let s = step + 1; s <= Math.min(step + k, c.trainer.total_steps); s++) {
      const options = rolloutOptions(c, roundsAt(scheduleOf(c.algorithm.rounds_ctrl), s), run.host.stopIds);
      await source.prepare!(s, stepSpecs(c, s, draw(s)), options);
    }
    return mine;
  };
}

/**
 * The in-process one-step-off source (rollout.max_staleness > 0 without --cluster), with the episodes a resumed
 * checkpoint had played ahead.
 */
async function oneStepOff(run: Run): Promise<OneStepOff> {
  const r = run.resumed;
  const file = r && r.state.phase === "rl" ? `${r.dir}/${AHEAD_FILE}` : undefined;
  const text = file ? await Deno.readTextFile(file).catch(() => undefined) : undefined;
  const record = text ? JSON.parse(text) as AheadRecord : undefined;
  const resumed = record?.step === run.state.rlStep + 1 ? record : undefined;
  return await OneStepOff.create(run.learner, {
    config: run.config,
    base: run.host.tensors,
    rollout: run.rollout,
    resumed,
  });
}

/**
 * An abandoned step: logged to metrics.jsonl (phase `rl_abandoned`: why, which servers, the error mix), counted
 * against the failure budget, then the environment is waited for with growing pauses (1 s, doubling to 1 min) until
 * a create answers or the outage allowance is spent. Past the budget the run saves a checkpoint and stops with
 * `RunStopped` (exit code 3), naming the servers, their errors and the resume command.
 */
async function abandonStep(
  run: Run,
  budget: FailureBudget,
  step: number,
  ts: readonly Trajectory[],
  save: () => Promise<unknown>,
): Promise<void> {
  const a = budget.abandon(ts);
  await run.log.metric({
    phase: "rl_abandoned",
    step,
    time: new Date().toISOString(),
    attempt: a.attempt,
    abandoned_total: a.total,
    episodes: a.episodes,
    env_failures: a.failed,
    why: a.why,
    servers: a.mix,
  });
  const resume = `deno task train --resume ${run.dir}`;
  const stop = async (why: string) => {
    await save();
    throw new RunStopped(
      `The environment keeps failing: ${why}. Errors by server: ${mixText(budget.mix)}. A checkpoint was saved; ` +
        `fix or restart the server (or pass another with env.urls) and resume with: ${resume}`,
    );
  };
  if (a.spent) return await stop(a.spent);
  const urls = run.env.client.transport.health().map((h) => h.url).join(", ");
  const left = budget.outageLeftMs(), start = performance.now();
  run.rep.line(
    `The environment failed ${a.failed} of ${a.episodes} episodes (${mixText(a.mix)}; e.g. ${a.why}); the step is ` +
      `not counted (attempt ${a.attempt} of ${budget.limits.maxStepRetries + 1}, ${a.total} abandoned in this run). ` +
      `Waiting for ${urls} (up to ${(left / 60_000).toFixed(1)} min).`,
  );
  for (let pause = 1000;; pause = Math.min(60_000, pause * 2)) {
    if (run.stopRequested()) return;
    try {
      await checkEnv(run.env);
      run.rep.line(`The environment answers again after ${((performance.now() - start) / 1000).toFixed(0)} s.`);
      return;
    } catch {
      if (performance.now() - start + pause > left) break;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
  await stop(`${urls} did not answer for ${run.config.env.outage_minutes} min (env.outage_minutes)`);
}

/**
 * An evaluation; when the environment failed too much of it, `save` keeps a checkpoint and the run stops with
 * `RunStopped` (exit code 3), to resume once the server is back (the evaluation runs again then).
 */
export async function evaluateOrStop(run: Run, phase: string, step: number, save: () => Promise<unknown>) {
  try {
    return await run.evaluate(phase, step);
  } catch (e) {
    if (!(e instanceof EnvFailed)) throw e;
    await save();
    throw new RunStopped(
      `${e.message} A checkpoint was saved; fix or restart the server and resume with: ` +
        `deno task train --resume ${run.dir}`,
    );
  }
}

/** The RL optimizer, with the moments of a resumed RL-phase checkpoint (never an SFT one's). */
async function rlOptimizer(run: Run): Promise<AdamW> {
  const c = run.config;
  const opt = phaseOptimizer(run.learner, c, { weightDecay: c.actor.weight_decay, maxGradNorm: c.actor.grad_clip });
  const r = run.resumed;
  if (r?.moments && r.state.phase === "rl") opt.restore(r.moments.m, r.moments.v, r.state.optimizerStep);
  if (c.actor.use_kl_loss && run.state.reference === null && !run.learner.model.lora) {
    // No SFT phase saved the starting weights: keep them as the reference before RL changes them.
    run.state.reference = "checkpoints/rl-reference";
    await run.save(undefined, "rl-reference");
  }
  return opt;
}

/**
 * PPO's critic: from a resumed RL checkpoint's critic (weights and moments), else a copy of the actor as RL starts
 * (after SFT) with a zero value head.
 */
async function startCritic(run: Run): Promise<Critic> {
  const r = run.resumed?.state.phase === "rl" ? run.resumed.critic : undefined;
  const critic = new Critic(run.learner, run.config, r?.tensors ?? await run.learner.model.weights.toHost());
  if (r?.moments) critic.opt.restore(r.moments.m, r.moments.v, Number(run.resumed?.state.notes.criticStep ?? 0));
  return critic;
}

/**
 * The frozen reference policy for the KL loss: the weights RL started from, as saved in the run folder; with LoRA,
 * the base model with the adapter off (verl's ref_in_actor): the learner's own weights, no copy.
 */
async function referenceModel(run: Run): Promise<Transformer | undefined> {
  const m = run.learner.model;
  if (run.config.actor.use_kl_loss && m.lora) return new Transformer(m.gpu, m.config, m.weights);
  if (!run.config.actor.use_kl_loss || !run.state.reference) return undefined;
  const ref = await loadModelDir(`${run.dir}/${run.state.reference}`);
  return Transformer.fromHost(run.learner.gpu, ref.config, ref.tensors);
}

/** A logged number to a fixed number of decimals, or "–" when the step did not measure it. */
function fixed(v: number | undefined, digits: number): string {
  return v === undefined ? "–" : v.toFixed(digits);
}

function percent(v: number | undefined, digits: number): string {
  return v === undefined ? "–" : `${(100 * v).toFixed(digits)}%`;
}

/** The step's numbers by kind of prompt (data.synthetic_prompts; step_metrics.ts kindMetrics), when it has them. */
function kinds(m: Record<string, number>): string {
  const of = (kind: string) =>
    `${kind} reward ${fixed(m[`${kind}_reward_mean`], 3)} success ${percent(m[`${kind}_success_rate`], 1)}`;
  const has = (kind: string) => `${kind}_reward_mean` in m;
  return has("split") || has("synthetic") ? `(${of("split")}; ${of("synthetic")})  ` : "";
}

/**
 * A step's line. The policy numbers appear only when the update computed them; otherwise the line says why they are
 * missing, and a share of the tokens is named when skipped micro-batches left some out.
 */
export function stepLine(step: number, total: number, m: Record<string, number>): string {
  const head = `step ${step}/${total}  reward ${fixed(m.reward_mean, 3)}  success ${percent(m.success_rate, 1)}  ` +
    `${kinds(m)}rounds ${fixed(m.rounds_mean, 1)}/${m.rounds_max}`;
  const speed = m.tokens_per_s === undefined ? "" : `  ${m.tokens_per_s.toFixed(0)} tok/s`;
  if (m.policy_loss === undefined) {
    const why = m.groups_with_signal === 0
      ? "every group's rewards were equal, so every advantage is 0"
      : m.episodes === m.env_failures + m.prompt_overflows
      ? "no episode could be trained on"
      : "the actor did not learn this step";
    return `${head}  no policy update computed (${why})${speed}`;
  }
  const kl = m.kl === undefined ? "" : `  kl ${m.kl.toFixed(4)}`;
  const part = m.computed_token_share === undefined
    ? ""
    : ` (on ${(100 * m.computed_token_share).toFixed(0)}% of the tokens; the rest had advantage 0)`;
  return `${head}  loss ${m.policy_loss.toFixed(4)}${kl}  entropy ${m.entropy.toFixed(3)}${part}  ` +
    `grad ${m.grad_norm.toFixed(2)}${speed}`;
}
