/**
 * Greedy evaluation on request in the studio page: a checkpoint played on the first test goals as
 * `deno task eval --model DIR --limit N` plays it (its crucible.json's prompt, round and length limits, temperature
 * and KV cache; the task's test split; seed 0; one episode per goal), on the page's GPU and the page's in-process
 * game, so the numbers are the command's on the same weights.
 */
import { resolveConfig } from "../config/load.ts";
import type { Gpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import { loadGpuModel } from "../model/load.ts";
import { rolloutOptions } from "../rollout/options.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { readAgentSettings } from "../train/agent_settings.ts";
import { type EvalResult, evaluate } from "../train/eval.ts";
import { openEnv, splitIndices } from "../train/setup.ts";

/** Options of {@linkcode evaluateCheckpoint}. */
export interface PageEvalOptions {
  /** The first this many test goals; 0 for all. */
  limit: number;
  /** Called as each episode ends. */
  onEpisode?: (t: Trajectory) => void;
}

/** The result and its episodes. */
export interface PageEval {
  result: EvalResult;
  trajectories: Trajectory[];
}

/** Plays the test goals with the checkpoint in `dir` (see the module header). */
export async function evaluateCheckpoint(gpu: Gpu, dir: string, o: PageEvalOptions): Promise<PageEval> {
  const agent = await readAgentSettings(dir);
  const task = agent?.task ?? "textcraft";
  const config = resolveConfig({ text: "", name: "eval" }, [`task=${task}`]);
  const env = await openEnv(config, { inProcess: true });
  const g = await loadGpuModel(gpu, dir);
  const r = agent
    ? {
      ...config.rollout,
      kv_cache: agent.kv_cache ?? "f32",
      max_tokens_per_turn: agent.max_tokens_per_turn,
      max_prompt_length: agent.max_prompt_length,
      max_response_length: agent.max_response_length,
    }
    : config.rollout;
  const maxLen = Math.min(r.max_prompt_length + r.max_response_length, g.config.maxPositions);
  const generator = new Generator(g.model, { slots: r.slots, maxLen, blockSteps: r.block_steps, cache: r.kv_cache });
  try {
    if (!g.tokenizer) throw new TypeError(`${dir} has no tokenizer.json`);
    const { indices: all } = await splitIndices(config, { task: env.task }, "test");
    const indices = o.limit > 0 ? all.slice(0, o.limit) : all;
    const played = await evaluate(
      {
        generator,
        tokenizer: g.tokenizer,
        client: env.evalClient,
        task: agent ? { ...env.task, prompt: agent.prompt } : env.task,
      },
      indices,
      {
        ...rolloutOptions(
          { ...config, rollout: r },
          agent?.max_rounds ?? env.task.maxRounds,
          g.stopIds,
          agent?.temperature ?? 0,
        ),
        samples: 1,
        seed: 0,
        onEpisode: o.onEpisode,
      },
    );
    return { result: { ...played.result, split: "test", splitTasks: all.length }, trajectories: played.trajectories };
  } finally {
    generator.release();
    g.model.weights.release();
    await env.close();
  }
}
