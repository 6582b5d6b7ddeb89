/**
 * Evaluation: every task of a split played `samples` times; Avg@n (mean success over all episodes, AgentGym's
 * "Avg"), Pass@n (share of tasks solved at least once) and mean reward, overall and by category (TextCraft: depth).
 * The rates are over the episodes that played: environment failures (retried `retries` times first) and prompt
 * overflows (the first observation did not fit max_prompt_length) are counted apart and left out; truncated episodes
 * (max_response_length) played and count as failures, and are counted too. A task's category and groups are the
 * task hooks' reading of what the environment said about it at reset (Trajectory.taskInfo: BFCL's server names the
 * entry's category and classes), so results follow the tasks a server actually holds; by its index where it said
 * nothing.
 */
import { type RolloutContext, type RolloutOptions, runRollouts } from "../rollout/agent.ts";
import type { Trajectory } from "../rollout/trajectory.ts";

/** Rates over a set of tasks. */
export interface Rates {
  /** Tasks evaluated. */
  tasks: number;
  /** Episodes played and scored. */
  episodes: number;
  /** Mean success over episodes (Avg@n). */
  avg: number;
  /** Share of tasks with at least one success (Pass@n). */
  pass: number;
  /** Mean reward over the episodes. */
  meanReward: number;
}

/** One evaluation's results. */
export interface EvalResult extends Rates {
  /** Episodes per task (trainer.eval_samples). */
  samples: number;
  /** The split the tasks were drawn from and how many tasks it holds (`tasks` of them were played). */
  split?: string;
  /** How many tasks the split holds. */
  splitTasks?: number;
  /** Episodes whose environment failed (after retries), left out of the rates. */
  envFailures: number;
  /** Episodes whose first observation overflowed max_prompt_length: never played, left out of the rates. */
  overflows: number;
  /** Played episodes cut at max_response_length (in the rates, as failures). */
  truncated: number;
  /** Rates by the task's category (TextCraft: crafting depth). */
  byCategory: Record<string, Rates>;
  /** Rates by the task's further groups (BFCL: by involved class); absent when the task has none. */
  byGroup?: Record<string, Rates>;
  /** Each task's successes out of its episodes. */
  perTask: { task: number; category: string; successes: number; episodes: number }[];
}

/** Plays every task `samples` times and scores the episodes. */
export async function evaluate(
  ctx: RolloutContext,
  indices: readonly number[],
  o: RolloutOptions & { samples: number; seed: number; retries?: number },
): Promise<{ result: EvalResult; trajectories: Trajectory[] }> {
  const specs = indices.flatMap((task, g) =>
    Array.from({ length: o.samples }, (_, k) => ({ task, group: g, seed: o.seed + g * o.samples + k }))
  );
  const trajectories = await runRollouts(ctx, specs, o);
  // An episode whose environment failed is played again, with its own seed, up to `retries` times.
  for (let r = 0; r < (o.retries ?? 0); r++) {
    const again = trajectories.flatMap((t, i) => (t.finish === "env_failure" ? [i] : []));
    if (again.length === 0) break;
    const replayed = await runRollouts(ctx, again.map((i) => specs[i]), o);
    again.forEach((i, k) => (trajectories[i] = replayed[k]));
  }
  const groups = ctx.task.groups?.bind(ctx.task);
  const category = (i: number, info?: Info) => ctx.task.category?.(i, info) ?? "all";
  return { result: scoreEpisodes(trajectories, o.samples, category, groups), trajectories };
}

type Info = Readonly<Record<string, unknown>>;

/**
 * Scores finished episodes. A task is labelled by `category` and `groups` given its index and what the environment
 * said about it at reset (the first of its episodes that has it).
 */
export function scoreEpisodes(
  ts: readonly Trajectory[],
  samples: number,
  category: (task: number, info?: Info) => string,
  groups?: (task: number, info?: Info) => string[],
): EvalResult {
  const byTask = new Map<number, Trajectory[]>();
  for (const t of ts) byTask.set(t.task, [...(byTask.get(t.task) ?? []), t]);
  const perTask = [...byTask].map(([task, list]) => {
    const ok = list.filter((t) => t.finish !== "env_failure" && t.finish !== "prompt_overflow");
    const info = list.find((t) => t.taskInfo)?.taskInfo;
    return {
      task,
      category: category(task, info),
      groups: groups?.(task, info) ?? [],
      successes: ok.filter((t) => t.success).length,
      episodes: ok.length,
      reward: ok.reduce((a, t) => a + (t.reward ?? 0), 0),
    };
  });
  const rates = (rows: typeof perTask): Rates => {
    const episodes = rows.reduce((a, r) => a + r.episodes, 0);
    const scored = rows.filter((r) => r.episodes > 0);
    return {
      tasks: rows.length,
      episodes,
      avg: episodes === 0 ? 0 : rows.reduce((a, r) => a + r.successes, 0) / episodes,
      pass: scored.length === 0 ? 0 : scored.filter((r) => r.successes > 0).length / scored.length,
      meanReward: episodes === 0 ? 0 : rows.reduce((a, r) => a + r.reward, 0) / episodes,
    };
  };
  const categories = [...new Set(perTask.map((r) => r.category))].sort();
  const byGroup = groups && Object.fromEntries(
    [...new Set(perTask.flatMap((r) => r.groups))].sort()
      .map((g) => [g, rates(perTask.filter((r) => r.groups.includes(g)))]),
  );
  return {
    ...rates(perTask),
    samples,
    envFailures: ts.filter((t) => t.finish === "env_failure").length,
    overflows: ts.filter((t) => t.finish === "prompt_overflow").length,
    truncated: ts.filter((t) => t.finish === "length").length,
    byCategory: Object.fromEntries(categories.map((c) => [c, rates(perTask.filter((r) => r.category === c))])),
    ...(byGroup ? { byGroup } : {}),
    perTask: perTask.map(({ reward: _r, groups: _g, ...rest }) => rest),
  };
}

/**
 * The tasks an evaluation covers, for every line that prints its rates: "on 20 of 100 test tasks" for a subset,
 * "on all 100 test tasks" for the whole split, "on 64 tasks" when the split is unnamed; with the episodes left out of
 * the rates where there are any (never played: past max_prompt_length, or the environment failed).
 *
 * @example
 * ```ts
 * coverage({ tasks: 20, split: "test", splitTasks: 100 }); // "on 20 of 100 test tasks"
 * coverage({ tasks: 48, splitTasks: 48, overflows: 12 });
 * // "on all 48 tasks (12 past max_prompt_length: 12 episodes left out)"
 * ```
 */
export function coverage(
  r: Pick<EvalResult, "tasks" | "split" | "splitTasks"> & Partial<Pick<EvalResult, "overflows" | "envFailures">>,
): string {
  const split = r.split ? `${r.split} ` : "";
  const on = r.splitTasks === undefined
    ? `on ${r.tasks} ${split}task${r.tasks === 1 ? "" : "s"}`
    : r.tasks === r.splitTasks
    ? `on all ${r.tasks} ${split}tasks`
    : `on ${r.tasks} of ${r.splitTasks} ${split}tasks`;
  const out = [
    r.overflows ? `${r.overflows} past max_prompt_length` : "",
    r.envFailures ? `${r.envFailures} whose environment failed` : "",
  ].filter((x) => x);
  const n = (r.overflows ?? 0) + (r.envFailures ?? 0);
  return out.length === 0 ? on : `${on} (${out.join(" and ")}: ${n} episode${n === 1 ? "" : "s"} left out)`;
}
