/**
 * Multi-turn rollouts: many episodes at once against an environment, sampling batched across every live episode,
 * environment steps in parallel. Token in, token out: sampled ids carry mask 1 and their sampling log-probabilities;
 * rendered observation chunks carry mask 0. An episode whose environment fails is marked `env_failure` with a null
 * reward, never scored 0.
 *
 * Episodes are not held in lockstep rounds. With a sampler that decodes block by block (`advance`), every live
 * episode's turn takes one block at a time; an episode whose turn ended in a block takes its environment step and
 * joins the next block with the reply pending, while the others go on. Turns differ in length (the main job's run
 * from 1 to 100 tokens, median 20), and in lockstep a round took as many blocks as its longest turn, the last of
 * them for a few sequences: block by block, fewer and fuller blocks do the same work (each block has a fixed cost).
 * Which episodes share a block depends on their tokens alone, never on timing, so a rollout replays exactly.
 */
import type { EnvClient, EnvSession } from "../env/client.ts";
import { EnvError } from "../env/errors.ts";
import type { DecodeLimits, DecodePiece, Generation } from "../model/generate.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { SampleSettings } from "../ops/sample.ts";
import { stateAnchor } from "../task/anchor.ts";
import type { Task } from "../task/task.ts";
import { ChatRenderer } from "./chat.ts";
import type { Trajectory, TurnRecord } from "./trajectory.ts";

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
  /** The most environment rounds (agent turns) an episode takes. */
  maxRounds: number;
  /** The most tokens the agent writes in one turn. */
  maxTokensPerTurn: number;
  /** Most tokens after the prompt (sampled and observation); a chunk that would pass it ends the episode. */
  maxResponseLength: number;
  /** The most tokens of the first prompt; a longer one ends the episode as a prompt overflow. */
  maxPromptLength: number;
  /** Temperature, top-k and top-p of the policy's turns. */
  sampling: SampleSettings;
  /** Ids that end an assistant turn (e.g. <|im_end|>, eos). */
  stopIds: readonly number[];
  /** Called when an episode ends (progress bars). */
  onEpisode?: (t: Trajectory) => void;
  /** Accumulates the wall time spent waiting for the environment (create, reset, observe, step), in seconds. */
  timing?: { envSeconds: number };
}

/**
 * What samples the policy's turns: the KV-cached Generator, or in tests a scripted stand-in. Sequences hold a
 * prompt and appended chunks; `decode` continues several at once.
 */
export interface Sampler {
  /** How many sequences it holds at once. */
  readonly options: { slots: number };
  /** Opens a sequence on `prompt` with its own sampling stream; returns its handle. */
  open(prompt: readonly number[], seed: number): number;
  /** Appends tokens (an observation) to a sequence. */
  append(seq: number, ids: readonly number[]): void;
  /** Samples one turn of each sequence, within its limits. */
  decode(seqs: readonly number[], limits: readonly DecodeLimits[], settings?: SampleSettings): Promise<Generation[]>;
  /**
   * One block of decode: what each sequence sampled, `finish` set where its turn ended (see Generator.advance).
   * Optional: without it every turn is decoded whole.
   */
  advance?(seqs: readonly number[], limits: readonly DecodeLimits[], settings?: SampleSettings): Promise<DecodePiece[]>;
  /** Frees a sequence. */
  close(seq: number): void;
}

/** What a rollout plays with. */
export interface RolloutContext {
  /** What samples the policy's turns. */
  generator: Sampler;
  /** The policy's tokenizer and chat template. */
  tokenizer: Tokenizer;
  /** The environment's client. */
  client: EnvClient;
  /** The task: prompt, action parser, success rule. */
  task: Task;
}

interface Live {
  spec: EpisodeSpec;
  env: EnvSession;
  seq: number;
  t: Trajectory;
  /** The turn being sampled: tokens so far (empty between turns). */
  turn: Generation;
  /** The state the turn being sampled acts from, as the task identifies states (src/task/anchor.ts). */
  anchor: string;
}

/** Plays every episode; at most `generator` slots run at once, new ones start as slots free up. */
export async function runRollouts(
  ctx: RolloutContext,
  episodes: readonly EpisodeSpec[],
  o: RolloutOptions,
): Promise<Trajectory[]> {
  if (!Number.isInteger(o.maxRounds) || o.maxRounds < 1) {
    throw new RangeError(`A rollout's round limit must be a positive integer, got ${o.maxRounds}`);
  }
  const r = new Rollout(ctx, o, episodes.length);
  const queue = episodes.map((spec, i) => ({ spec, i }));
  try {
    while (queue.length > 0 || r.live.size > 0) {
      // Start episodes while slots are free: create, reset and observe in parallel.
      const starting = queue.splice(0, Math.max(0, ctx.generator.options.slots - r.live.size));
      const t0 = performance.now();
      await Promise.all(starting.map(({ spec, i }) => r.start(spec, i)));
      if (o.timing) o.timing.envSeconds += (performance.now() - t0) / 1000;
      // An episode whose token budget is spent ends before another turn.
      for (const [i, l] of [...r.live]) {
        if (l.turn.ids.length === 0 && l.t.responseIds.length >= o.maxResponseLength) {
          await r.finish(i, l, end(l.t, "length", ctx.task));
        }
      }
      if (r.live.size > 0) await r.block();
    }
  } finally {
    // On any error, the environments still open are closed, so none is left on the server.
    await r.abandon();
  }
  return r.results;
}

/** The episodes of one rollout: those playing, and the finished ones by index. */
class Rollout {
  readonly live = new Map<number, Live>();
  readonly results: Trajectory[];
  readonly #chat: ChatRenderer;

  constructor(readonly ctx: RolloutContext, readonly o: RolloutOptions, count: number) {
    this.results = new Array(count);
    this.#chat = new ChatRenderer(ctx.tokenizer, ctx.task.tools?.bind(ctx.task));
  }

  /** Opens an environment and a sequence for one episode; an environment failure finishes it at once. */
  async start(spec: EpisodeSpec, i: number): Promise<void> {
    const { ctx, o } = this;
    const t = emptyTrajectory(spec);
    let env: EnvSession | undefined;
    try {
      env = await ctx.client.create({ parseAction: (text) => ctx.task.parseAction(text) });
      await env.reset(spec.task);
      if (env.info) t.taskInfo = env.info;
      const first = await env.observe();
      t.firstObservation = first;
      t.promptIds = this.#chat.prompt({ ...ctx.task.prompt, observation: first });
      if (t.promptIds.length > o.maxPromptLength) {
        await env.close().catch(() => {});
        return this.finish(i, undefined, overflow(t, o.maxPromptLength));
      }
      const seq = ctx.generator.open(t.promptIds, spec.seed);
      const anchor = stateAnchor(ctx.task, { firstObservation: first, turns: [], observation: first, info: env.info });
      this.live.set(i, { spec, env, seq, t, turn: newTurn(), anchor });
    } catch (e) {
      await env?.close().catch(() => {});
      if (!(e instanceof EnvError)) throw e;
      await this.finish(i, undefined, failed(t, e));
    }
  }

  /**
   * One block for every live episode's turn (or, with a sampler that has no `advance`, one whole turn), then the
   * environment steps, in parallel, of the episodes whose turns ended in it.
   */
  async block(): Promise<void> {
    const { generator } = this.ctx;
    const entries = [...this.live.entries()];
    const seqs = entries.map(([, l]) => l.seq);
    const limits = entries.map(([, l]) => ({
      maxNewTokens: Math.min(this.o.maxTokensPerTurn, this.o.maxResponseLength - l.t.responseIds.length) -
        l.turn.ids.length,
      stopIds: this.o.stopIds,
    }));
    const pieces = generator.advance
      ? await generator.advance(seqs, limits, this.o.sampling)
      : await generator.decode(seqs, limits, this.o.sampling);
    const ended: [number, Live, Generation][] = [];
    entries.forEach(([i, l], n) => {
      const p = pieces[n];
      l.turn.ids.push(...p.ids);
      l.turn.logprobs.push(...p.logprobs);
      if (!p.finish) return;
      l.turn.finish = p.finish;
      ended.push([i, l, l.turn]);
      l.turn = newTurn();
    });
    const t0 = performance.now();
    await Promise.all(ended.map(([i, l, g]) => this.#step(i, l, g)));
    if (this.o.timing) this.o.timing.envSeconds += (performance.now() - t0) / 1000;
  }

  async #step(i: number, l: Live, g: Generation): Promise<void> {
    const { ctx, o } = this, t = l.t;
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
      return this.finish(i, l, failed(t, e));
    }
    const parsed = ctx.task.parseAction(text);
    const turn: TurnRecord = {
      text,
      action: "action" in parsed ? parsed.action : null,
      observation: result.observation,
      reward: result.reward,
      anchor: l.anchor,
    };
    t.turns.push(turn);
    t.rounds++;
    t.reward = result.reward;
    if (result.done) return this.finish(i, l, end(t, "done", ctx.task, result.info));
    if (t.rounds >= o.maxRounds) return this.finish(i, l, end(t, "max_rounds", ctx.task));
    const chunk = this.#chat.observation(result.observation, stopped ? g.ids[g.ids.length - 1] : undefined);
    if (g.finish === "length" || t.responseIds.length + chunk.length > o.maxResponseLength) {
      return this.finish(i, l, end(t, "length", ctx.task));
    }
    l.anchor = stateAnchor(ctx.task, {
      firstObservation: t.firstObservation,
      turns: t.turns,
      observation: result.observation,
      info: result.info,
    });
    ctx.generator.append(l.seq, chunk);
    t.responseIds.push(...chunk);
    t.mask.push(...chunk.map(() => 0));
    t.logprobs.push(...chunk.map(() => 0));
  }

  /** Closes every live episode's environment and sequence (after an error). */
  async abandon(): Promise<void> {
    for (const [i, l] of [...this.live]) {
      this.live.delete(i);
      this.ctx.generator.close(l.seq);
      await l.env.close().catch(() => {});
    }
  }

  /** Records a finished episode and frees its sequence and environment. */
  async finish(i: number, l: Live | undefined, t: Trajectory): Promise<void> {
    if (l) {
      this.live.delete(i);
      this.ctx.generator.close(l.seq);
      await l.env.close().catch(() => {});
    }
    this.results[i] = t;
    this.o.onEpisode?.(t);
  }
}

function newTurn(): Generation {
  return { ids: [], logprobs: [], finish: "max_tokens" };
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

/** `info`: what the server said with the last step, for a task whose pass is not read off the reward (BFCL's). */
function end(t: Trajectory, finish: Trajectory["finish"], task: Task, info?: Record<string, unknown>): Trajectory {
  t.finish = finish;
  t.success = t.reward !== null && task.isSuccess(t.reward, info);
  return t;
}

function overflow(t: Trajectory, limit: number): Trajectory {
  t.finish = "prompt_overflow";
  t.reward = null;
  t.success = false;
  t.error = `The prompt has ${t.promptIds.length} tokens, past max_prompt_length ${limit}`;
  t.promptIds = [];
  return t;
}

function failed(t: Trajectory, e: EnvError): Trajectory {
  t.finish = "env_failure";
  t.reward = null;
  t.success = false;
  t.error = e.message;
  return t;
}
