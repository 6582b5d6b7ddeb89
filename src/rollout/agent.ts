/**
 * Multi-turn rollouts: many episodes at once against an environment, sampling batched across every live episode
 * (one `decode` per round), environment steps in parallel. Token in, token out: sampled ids carry mask 1 and their
 * sampling log-probabilities; rendered observation chunks carry mask 0. An episode whose environment fails is
 * marked `env_failure` with a null reward, never scored 0.
 */
import type { EnvClient, EnvSession } from "../env/client.ts";
import { EnvError } from "../env/errors.ts";
import type { DecodeLimits, Generation } from "../model/generate.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { SampleSettings } from "../ops/sample.ts";
import type { Task } from "../../tasks/task.ts";
import { ChatRenderer } from "./chat.ts";
import { type Trajectory, type TurnRecord } from "./trajectory.ts";

/** One episode to play. */
export interface EpisodeSpec {
  /** Task index passed to the environment's reset. */
  task: number;
  /** Prompt group (GRPO groups samples of the same prompt). */
  group: number;
  /** Seed of the episode's sampling stream. */
  seed: number;
}

/** Limits and sampling of a rollout. */
export interface RolloutOptions {
  maxRounds: number;
  maxTokensPerTurn: number;
  /** Most tokens after the prompt (sampled and observation); a chunk that would pass it ends the episode. */
  maxResponseLength: number;
  maxPromptLength: number;
  sampling: SampleSettings;
  /** Ids that end an assistant turn (e.g. <|im_end|>, eos). */
  stopIds: readonly number[];
  /** Called when an episode ends (progress bars). */
  onEpisode?: (t: Trajectory) => void;
}

/**
 * What samples the policy's turns: the KV-cached Generator, or in tests a scripted stand-in. Sequences hold a
 * prompt and appended chunks; `decode` continues several at once.
 */
export interface Sampler {
  readonly options: { slots: number };
  open(prompt: readonly number[], seed: number): number;
  append(seq: number, ids: readonly number[]): void;
  decode(seqs: readonly number[], limits: readonly DecodeLimits[], settings?: SampleSettings): Promise<Generation[]>;
  close(seq: number): void;
}

/** What a rollout plays with. */
export interface RolloutContext {
  generator: Sampler;
  tokenizer: Tokenizer;
  client: EnvClient;
  task: Task;
}

interface Live {
  spec: EpisodeSpec;
  env: EnvSession;
  seq: number;
  t: Trajectory;
}

/** Plays every episode; at most `generator` slots run at once, new ones start as slots free up. */
export async function runRollouts(
  ctx: RolloutContext,
  episodes: readonly EpisodeSpec[],
  o: RolloutOptions,
): Promise<Trajectory[]> {
  const chat = new ChatRenderer(ctx.tokenizer);
  const results: Trajectory[] = new Array(episodes.length);
  const queue = episodes.map((spec, i) => ({ spec, i }));
  const live = new Map<number, Live>();
  const slots = ctx.generator.options.slots;
  const finish = async (i: number, l: Live | undefined, t: Trajectory) => {
    if (l) {
      live.delete(i);
      ctx.generator.close(l.seq);
      await l.env.close().catch(() => {});
    }
    results[i] = t;
    o.onEpisode?.(t);
  };
  while (queue.length > 0 || live.size > 0) {
    // Start episodes while slots are free: create, reset and observe in parallel.
    const starting = queue.splice(0, Math.max(0, slots - live.size));
    await Promise.all(starting.map(async ({ spec, i }) => {
      const t = emptyTrajectory(spec);
      let env: EnvSession | undefined;
      try {
        env = await ctx.client.create({ parseAction: (text) => ctx.task.parseAction(text) });
        await env.reset(spec.task);
        const first = await env.observe();
        t.firstObservation = first;
        t.promptIds = chat.prompt({ ...ctx.task.prompt, observation: first });
        if (t.promptIds.length > o.maxPromptLength) {
          throw new RangeError(
            `Task ${spec.task}'s prompt has ${t.promptIds.length} tokens, past max_prompt_length ${o.maxPromptLength}`,
          );
        }
        const seq = ctx.generator.open(t.promptIds, spec.seed);
        live.set(i, { spec, env, seq, t });
      } catch (e) {
        await env?.close().catch(() => {});
        if (!(e instanceof EnvError)) throw e;
        await finish(i, undefined, failed(t, e));
      }
    }));
    // An episode whose token budget is spent ends before another turn.
    for (const [i, l] of [...live]) {
      if (l.t.responseIds.length >= o.maxResponseLength) await finish(i, l, end(l.t, "length", ctx.task));
    }
    if (live.size === 0) continue;
    const entries = [...live.entries()];
    const gens = await ctx.generator.decode(
      entries.map(([, l]) => l.seq),
      entries.map(([, l]) => ({
        maxNewTokens: Math.min(o.maxTokensPerTurn, o.maxResponseLength - l.t.responseIds.length),
        stopIds: o.stopIds,
      })),
      o.sampling,
    );
    await Promise.all(entries.map(async ([i, l], n) => {
      const g = gens[n];
      const t = l.t;
      t.responseIds.push(...g.ids);
      t.mask.push(...g.ids.map(() => 1));
      t.logprobs.push(...g.logprobs);
      const stopped = g.finish === "stop";
      const text = ctx.tokenizer.decode(stopped ? g.ids.slice(0, -1) : g.ids, { skipSpecialTokens: true });
      let result;
      try {
        result = await l.env.step(text);
      } catch (e) {
        if (!(e instanceof EnvError)) throw e;
        return finish(i, l, failed(t, e));
      }
      const parsed = ctx.task.parseAction(text);
      const turn: TurnRecord = {
        text,
        action: "action" in parsed ? parsed.action : null,
        observation: result.observation,
        reward: result.reward,
      };
      t.turns.push(turn);
      t.rounds++;
      t.reward = result.reward;
      if (result.done) return finish(i, l, end(t, "done", ctx.task));
      if (t.rounds >= o.maxRounds) return finish(i, l, end(t, "max_rounds", ctx.task));
      const chunk = chat.observation(result.observation, stopped ? g.ids[g.ids.length - 1] : undefined);
      if (g.finish === "length" || t.responseIds.length + chunk.length > o.maxResponseLength) {
        return finish(i, l, end(t, "length", ctx.task));
      }
      ctx.generator.append(l.seq, chunk);
      t.responseIds.push(...chunk);
      t.mask.push(...chunk.map(() => 0));
      t.logprobs.push(...chunk.map(() => 0));
    }));
  }
  return results;
}

function emptyTrajectory(spec: EpisodeSpec): Trajectory {
  return {
    task: spec.task,
    group: spec.group,
    seed: spec.seed,
    promptIds: [],
    responseIds: [],
    mask: [],
    logprobs: [],
    reward: 0,
    success: false,
    rounds: 0,
    finish: "max_rounds",
    firstObservation: "",
    turns: [],
  };
}

function end(t: Trajectory, finish: Trajectory["finish"], task: Task): Trajectory {
  t.finish = finish;
  t.success = t.reward !== null && task.isSuccess(t.reward);
  return t;
}

function failed(t: Trajectory, e: EnvError): Trajectory {
  t.finish = "env_failure";
  t.reward = null;
  t.success = false;
  t.error = e.message;
  return t;
}
