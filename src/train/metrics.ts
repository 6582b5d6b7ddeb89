/**
 * The run's logs, one JSON object per line: metrics.jsonl (one line per training step), rollouts.jsonl (one line
 * per episode: conversation, actions, observations, reward, and the task's labels where its server gave them) and
 * evals.jsonl (one line per evaluation). Lines are appended as they happen, so a crash loses at most the step in
 * progress.
 */
import type { Tokenizer } from "../model/tokenizer.ts";
import type { Trajectory } from "../rollout/trajectory.ts";

/** Appends JSON lines to the files of one run folder. */
export class RunLog {
  constructor(readonly runDir: string) {}

  /** Appends one object to `<runDir>/<file>`. */
  async append(file: string, record: unknown): Promise<void> {
    await Deno.writeTextFile(`${this.runDir}/${file}`, JSON.stringify(record) + "\n", { append: true, create: true });
  }

  /** One training step's metrics. */
  metric(record: Record<string, unknown>): Promise<void> {
    return this.append("metrics.jsonl", record);
  }

  /** One evaluation's results. */
  evaluation(record: Record<string, unknown>): Promise<void> {
    return this.append("evals.jsonl", record);
  }

  /** Every episode of a step, with its conversation as text. */
  async rollouts(phase: string, step: number, trajectories: readonly Trajectory[], tok: Tokenizer): Promise<void> {
    await appendEpisodes(`${this.runDir}/rollouts.jsonl`, { phase, step }, trajectories, tok);
  }
}

/**
 * Appends one JSON line per episode (task, what the environment said about it at reset, reward, finish, turns, the
 * conversation as text) to `path`.
 */
export async function appendEpisodes(
  path: string,
  at: { phase: string; step: number },
  trajectories: readonly Trajectory[],
  tok: Tokenizer,
): Promise<void> {
  const lines = trajectories.map((t) =>
    JSON.stringify({
      phase: at.phase,
      step: at.step,
      task: t.task,
      ...(t.taskInfo ? { info: t.taskInfo } : {}),
      group: t.group,
      reward: t.reward,
      success: t.success,
      finish: t.finish,
      rounds: t.rounds,
      responseTokens: t.responseIds.length,
      first: t.firstObservation,
      turns: t.turns,
      conversation: tok.decode([...t.promptIds, ...t.responseIds]),
      error: t.error,
    })
  );
  if (lines.length === 0) return;
  await Deno.writeTextFile(path, lines.join("\n") + "\n", { append: true, create: true });
}
