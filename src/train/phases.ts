/**
 * The two phases of a run over one learner: the supervised warm start (`sftPhase`: the task's demonstrations or a
 * trajectory file, then an evaluation and the `sft-final` checkpoint that RL's KL term refers to) and RL
 * (`rlPhase`: steps of rollouts and updates, periodic evaluations and checkpoints, the final evaluation). Each
 * returns false when a stop request interrupted it, after saving a checkpoint to resume from.
 */
import { loadModelDir } from "../model/model_dir.ts";
import { Transformer } from "../model/transformer.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import { checkpointName, tidyCheckpoints } from "./checkpoint.ts";
import { Critic } from "./critic.ts";
import { phaseOptimizer, SkipGuard } from "./learner.ts";
import type { AdamW } from "./optimizer.ts";
import { byCategory, nextPrompts, recordSignal, signalPrompts } from "./prompts.ts";
import { roundsAt } from "../rollout/scheduler.ts";
import {
  groupRewards,
  rlStep,
  type RlStepContext,
  rolloutOptions,
  scheduleOf,
  stepMetrics,
  stepSpecs,
} from "./rl_step.ts";
import type { Run } from "./run.ts";
import { checkEnv } from "./setup.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { lrAt } from "./schedule.ts";
import type { TrainSequence } from "./sequences.ts";
import { runSft, sftEpochs, sftPlan } from "./sft.ts";
import { agentGymSequences, augmentedEpochs, oracleEpisodes, textEpisode } from "./sft_data.ts";

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
  let diverged = false;
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
      await run.log.metric({ phase: "sft", time: new Date().toISOString(), ...r });
      bar.tick(1, `loss ${r.loss.toFixed(3)}`);
      diverged = guard.record(r.applied);
      if (c.trainer.save_freq > 0 && r.step % c.trainer.save_freq === 0 && !diverged) await saveSft(run, opt);
    },
    stop: () => diverged || run.stopRequested(),
  });
  if (diverged) {
    await saveSft(run, opt);
    opt.release();
    throw guard.error(lowerLr(run, "sft.lr", c.sft.lr));
  }
  if (state.sftStep < total) {
    await saveSft(run, opt);
    opt.release();
    return false;
  }
  bar.done();
  opt.release();
  const sftEval = await run.evaluate("sft", 0);
  state.notes.sftEval = sftEval;
  state.phase = "rl";
  // LoRA's reference is the base with the adapter off, not a saved checkpoint.
  state.reference = run.learner.model.lora ? null : "checkpoints/sft-final";
  await run.save(undefined, "sft-final");
  run.rep.line(`After SFT: test success ${(100 * sftEval.avg).toFixed(1)}%`);
  return true;
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
async function sftData(run: Run): Promise<(epoch: number) => TrainSequence[]> {
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
    onSkipped: (n) => n > 0 && run.rep.line(`SFT: ${n} oracle plans do not fit max_response_length and are left out`),
  });
  return augmentedEpochs(new ChatRenderer(tokenizer), task.prompt, played.map(textEpisode), {
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
  run.critic = c.algorithm.adv_estimator === "gae" ? await startCritic(run) : undefined;
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
  };
  const sampling = c.data.prompt_sampling;
  // The run refused "signal" at its start for a task without categories.
  const category = sampling.type === "signal" ? run.rollout.task.category?.bind(run.rollout.task) : undefined;
  const groups = category && byCategory(run.train, category);
  const prompts = (step: number) =>
    groups
      ? signalPrompts(groups, c.data.train_batch_size, c.trainer.seed, step, sampling.floor, state.data)
      : nextPrompts(run.train, c.data.train_batch_size, c.trainer.seed, state.data);
  const bar = run.rep.bar("rl", stepsTotal);
  bar.tick(state.rlStep);
  const stepName = () => checkpointName("rl", state.rlStep);
  const guard = new SkipGuard(c.trainer.max_skipped_steps, "actor.lr", c.actor.lr);
  const ahead = aheadOf(run, prompts);
  while (state.rlStep < stepsTotal && !run.stopRequested()) {
    const step = state.rlStep + 1;
    const position = structuredClone(state.data);
    const r = await rlStep(ctx, step, ahead ? await ahead(step) : prompts(step));
    if (r.aborted) {
      // Most episodes failed in the environment: the step does not count; the same prompts run again once it is back.
      state.data = position;
      await waitForEnv(run, r.trajectories, () => run.save(opt, stepName()));
      continue;
    }
    state.rlStep = step;
    if (category) recordSignal(state.data, groupRewards(r.trajectories), category);
    const m = stepMetrics(r);
    await run.log.metric({ phase: "rl", step, time: new Date().toISOString(), ...m });
    if (r.updates.length > 0 && guard.record(r.updates.some((u) => u.applied))) {
      await run.save(opt, stepName());
      throw guard.error(lowerLr(run, "actor.lr", c.actor.lr));
    }
    await run.log.rollouts("rl", step, r.trajectories, run.host.tokenizer);
    bar.tick(1, `reward ${m.reward_mean.toFixed(2)} success ${(100 * m.success_rate).toFixed(0)}%`);
    run.rep.line(stepLine(step, stepsTotal, m));
    if (c.trainer.test_freq > 0 && step % c.trainer.test_freq === 0 && step < stepsTotal) {
      await run.evaluate("rl", step);
    }
    if (c.trainer.save_freq > 0 && step % c.trainer.save_freq === 0) await run.save(opt, stepName());
  }
  if (state.rlStep < stepsTotal) {
    await run.save(opt, stepName());
    return false;
  }
  bar.done();
  state.notes.finalEval = await run.evaluate("final", state.rlStep);
  await run.save(opt, "final");
  return true;
}

/**
 * With a rollout source that publishes ahead and rollout.max_staleness = k > 0: the prompts of a step, after
 * publishing those of the next k steps, so its workers play them while this step updates. The prompts are drawn in
 * step order, as without lookahead; a checkpoint's data position then lies up to k steps ahead, so a resumed run
 * skips those prompts (exact resume holds for k = 0 only).
 */
function aheadOf(
  run: Run,
  prompts: (step: number) => number[],
): ((step: number) => Promise<number[]>) | undefined {
  const c = run.config, k = c.rollout.max_staleness, source = run.source;
  if (!source?.prepare || k === 0) return undefined;
  const drawn = new Map<number, number[]>();
  const draw = (s: number) => drawn.get(s) ?? drawn.set(s, prompts(s)).get(s)!;
  return async (step) => {
    const mine = draw(step);
    drawn.delete(step);
    for (let s = step + 1; s <= Math.min(step + k, c.trainer.total_steps); s++) {
      const options = rolloutOptions(c, roundsAt(scheduleOf(c), s), run.host.stopIds);
      await source.prepare!(s, stepSpecs(c, s, draw(s)), options);
    }
    return mine;
  };
}

/**
 * Waits for the environment after a step whose episodes mostly failed: it is asked to create an environment again
 * with growing pauses (1 s, doubling to 1 min) until it answers or env.outage_minutes pass; then the run saves a
 * checkpoint and stops with an error naming the server.
 */
async function waitForEnv(run: Run, ts: readonly Trajectory[], save: () => Promise<unknown>): Promise<void> {
  const failed = ts.filter((t) => t.finish === "env_failure");
  const limit = run.config.env.outage_minutes * 60_000, start = performance.now();
  const urls = run.env.client.transport.health().map((h) => h.url).join(", ");
  run.rep.line(
    `The environment failed ${failed.length} of ${ts.length} episodes (${failed[0]?.error ?? "no answer"}); ` +
      `the step is not counted. Waiting for ${urls} (up to ${run.config.env.outage_minutes} min).`,
  );
  for (let pause = 1000;; pause = Math.min(60_000, pause * 2)) {
    if (run.stopRequested()) return;
    try {
      await checkEnv(run.env);
      run.rep.line(`The environment answers again after ${((performance.now() - start) / 1000).toFixed(0)} s.`);
      return;
    } catch {
      if (performance.now() - start + pause > limit) break;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
  await save();
  throw new Error(
    `The environment at ${urls} did not answer for ${run.config.env.outage_minutes} min; a checkpoint was saved. ` +
      `Start the server and resume with: deno task train --resume ${run.dir}`,
  );
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

function stepLine(step: number, total: number, m: Record<string, number>): string {
  return `step ${step}/${total}  reward ${m.reward_mean.toFixed(3)}  success ${(100 * m.success_rate).toFixed(1)}%  ` +
    `rounds ${m.rounds_mean.toFixed(1)}/${m.rounds_max}  loss ${m.policy_loss.toFixed(4)}  kl ${m.kl.toFixed(4)}  ` +
    `entropy ${m.entropy.toFixed(3)}  grad ${m.grad_norm.toFixed(2)}  ${m.tokens_per_s.toFixed(0)} tok/s`;
}
