/**
 * A run config's rollout limits and sampling as the agent loop takes them: one place that RL steps, evaluation
 * (`deno task eval`) and pretraining's held-out episodes all read, so they play with the same settings.
 */
import type { RunConfig } from "../config/schema.ts";
import type { RolloutOptions } from "./agent.ts";

/** Rollout limits and sampling of a config. */
export function rolloutOptions(
  c: RunConfig,
  maxRounds: number,
  stopIds: number[],
  temperature?: number,
): RolloutOptions {
  const r = c.rollout;
  return {
    maxRounds,
    maxTokensPerTurn: r.max_tokens_per_turn,
    maxPromptLength: r.max_prompt_length,
    maxResponseLength: r.max_response_length,
    sampling: { temperature: temperature ?? r.temperature, topP: r.top_p, topK: r.top_k },
    stopIds,
  };
}
