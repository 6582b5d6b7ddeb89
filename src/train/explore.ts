/**
 * Exploration for the learners in rounds (ETO, AgentEvol): `samples` episodes of each of a round's train tasks,
 * sampled at rollout.temperature with the learner's current weights under the evaluation's round limit (the task's),
 * an environment failure played again up to env.episode_retries times. Seeds come from (trainer.seed, round), so a
 * resumed run explores the same episodes.
 */
import { nextPrompts } from "../rl/prompts.ts";
import { rolloutOptions } from "../rollout/options.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { type EvalResult, evaluate } from "./eval.ts";
import type { Run } from "./types.ts";

/** A round's exploration: the tasks, every episode, their scores and the seconds it took. */
export interface Explored {
  tasks: number[];
  trajectories: Trajectory[];
  result: EvalResult;
  seconds: number;
}

/** The train tasks of a round: the whole split (count 0), or the next `count` of its shuffled walk (state.data). */
export function roundTasks(run: Run, count: number): number[] {
  if (count === 0) return [...run.train];
  return nextPrompts(run.train, count, run.config.trainer.seed, run.state.data);
}

/** Plays the round's episodes on the current weights and logs them (rollouts.jsonl, phase "explore"). */
export async function explore(run: Run, round: number, o: { tasks: number[]; samples: number }): Promise<Explored> {
  const c = run.config, t0 = performance.now();
  const bar = run.rep.bar(`explore ${round}`, o.tasks.length * o.samples);
  const played = await evaluate(run.rollout, o.tasks, {
    ...rolloutOptions(c, run.env.task.maxRounds, run.host.stopIds),
    samples: o.samples,
    seed: c.trainer.seed * 7919 + round * 1000003,
    retries: c.env.episode_retries,
    onEpisode: (t: Trajectory) => bar.tick(1, t.success ? "solved" : t.finish),
  });
  const result: EvalResult = { ...played.result, split: c.data.train_split };
  bar.done(
    `success ${(100 * result.avg).toFixed(1)}% of ${result.episodes} episodes, mean reward ` +
      result.meanReward.toFixed(3),
  );
  await run.log.rollouts("explore", round, played.trajectories, run.host.tokenizer);
  return { tasks: o.tasks, trajectories: played.trajectories, result, seconds: (performance.now() - t0) / 1000 };
}
