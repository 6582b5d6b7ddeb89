/**
 * AgentEvol after the warm start (algorithm.learner agentevol), in agentevol.iterations rounds (round_phase.ts): each
 * round explores the round's train tasks with the current weights, keeps the successful episodes as played, puts the
 * trainable weights back to the base's (AgentEvol's rule: every iteration fine-tunes the base, not the last model), and
 * fine-tunes with the sft.* settings on the starting demonstrations (the warm start's data, rewritten per epoch as it
 * asks) plus those successes. Per round one `agentevol_round` line in metrics.jsonl; per optimizer step one
 * `agentevol` line with SFT's numbers.
 */
import { writeStored } from "../gpu/split.ts";
import { lrAt } from "../rl/schedule.ts";
import { trainable } from "../rollout/trajectory.ts";
import { SkipGuard } from "../update/learner.ts";
import type { AdamW } from "../update/optimizer.ts";
import type { TrainSequence } from "../update/sequences.ts";
import { explore, roundTasks } from "./explore.ts";
import { runLora } from "./lora.ts";
import { sftData } from "./phases.ts";
import { type RoundLearner, roundOptimizer } from "./round_phase.ts";
import { loadModel } from "./setup.ts";
import { runSft, sftEpochs, sftPlan } from "./sft.ts";
import type { Run } from "./types.ts";

/** A round's successes as played (kept in mid-round checkpoints). */
export interface AgentEvolRound {
  kept: TrainSequence[];
}

/** AgentEvol's learner over a run. */
export function agentEvolLearner(run: Run): RoundLearner<AgentEvolRound> {
  const c = run.config;
  let demos: ((epoch: number) => TrainSequence[]) | undefined;
  return {
    phase: "agentevol",
    rounds: c.agentevol.iterations,
    async prepare(run, round) {
      const tasks = roundTasks(run, c.agentevol.tasks);
      const explored = await explore(run, round, { tasks, samples: c.agentevol.samples });
      const kept = explored.trajectories.filter((t) => t.success && trainable(t)).map((t) => ({
        ids: [...t.promptIds, ...t.responseIds],
        promptLength: t.promptIds.length,
        mask: t.mask,
      }));
      await run.log.metric({
        phase: "agentevol_round",
        step: run.state.round!.steps,
        round,
        time: new Date().toISOString(),
        tasks: tasks.length,
        episodes: explored.result.episodes,
        explore_success_rate: explored.result.avg,
        explore_reward_mean: explored.result.meanReward,
        kept: kept.length,
        time_explore_s: explored.seconds,
      });
      run.rep.line(`Round ${round}: ${kept.length} successful episodes kept beside the demonstrations`);
      await resetToBase(run);
      return { kept };
    },
    async train(run, data, o) {
      demos ??= await sftData(run);
      return await trainRound(run, data, demos, o);
    },
  };
}

/** Writes the base's trainable weights over the learner's: the starting model's, or a LoRA run's starting adapter. */
async function resetToBase(run: Run): Promise<void> {
  const l = run.learner, lora = l.model.lora;
  const base = lora
    ? (await runLora(run.config, run.host.config))!.adapter
    : (await loadModel(run.config, run.env.task)).tensors;
  const set = lora?.tensors ?? l.model.weights;
  for (const spec of set.specs) {
    const data = base?.get(spec.name);
    if (!data) throw new TypeError(`The base has no ${spec.name} to start AgentEvol's round from`);
    writeStored(set.stored(spec.name), data);
  }
}

/** Fine-tunes a round from state.round.step on: the demonstrations of each epoch plus the round's successes. */
async function trainRound(
  run: Run,
  data: AgentEvolRound,
  demos: (epoch: number) => TrainSequence[],
  o: Parameters<RoundLearner<AgentEvolRound>["train"]>[2],
): Promise<{ finished: boolean; opt: AdamW }> {
  const c = run.config, round = run.state.round!;
  const opt = roundOptimizer(run, "agentevol", { weightDecay: c.sft.weight_decay, maxGradNorm: c.sft.grad_clip });
  const epochs = sftEpochs(c.sft.epochs, (e) => [...demos(e), ...data.kept]);
  const plan = { batchTokens: c.sft.batch_tokens, seed: c.trainer.seed * 131 + round.index };
  const total = sftPlan(epochs, plan).length;
  const bar = run.rep.bar(`agentevol ${round.index}`, total);
  bar.tick(round.step);
  const guard = new SkipGuard(c.trainer.max_skipped_steps, "sft.lr", c.sft.lr);
  let skipped = false, t0 = performance.now();
  await runSft(run.learner, opt, {
    epochs,
    settings: {
      ...plan,
      microBatchTokens: c.actor.ppo_micro_batch_tokens,
      contextWeight: c.sft.context_loss_weight,
      lr: (k) => lrAt(c.sft.lr, c.sft.lr_schedule, k, total),
    },
    from: round.step,
    onStep: async (s) => {
      await run.log.metric({
        phase: "agentevol",
        round: round.index,
        time: new Date().toISOString(),
        ...s,
        step: round.steps + s.step,
        time_update_s: (performance.now() - t0) / 1000,
      });
      bar.tick(1, `loss ${s.loss.toFixed(3)}`);
      skipped = guard.record(s.applied);
      await o.afterStep(opt);
      t0 = performance.now();
    },
    stop: () => skipped || o.stop(),
  });
  if (skipped) throw guard.error("Resume from the latest checkpoint with a lower sft.lr.");
  if (round.step < total) return { finished: false, opt };
  bar.done();
  return { finished: true, opt };
}
