/**
 * Supervised data in the exact token layout RL trains on: the prompt and observation chunks rendered by the chat
 * template (mask 0), assistant turns as their ids plus the stop token (mask 1 where the turn is trained).
 * Sources: a task's oracle demonstrations played through the environment, or AgentGym trajectory files
 * (`{"conversations": [{"from": "human"|"gpt", "value": ..., "loss": ...}]}`, JSON array or JSONL).
 */
import { z } from "zod";
import type { EnvClient } from "../env/client.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { runRollouts } from "../rollout/agent.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import { ScriptedSampler } from "../rollout/scripted.ts";
import type { AugmentContext, Task, TaskOptions, TextEpisode } from "../task/task.ts";
import { Rng } from "../util/random.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import type { TrainSequence } from "../update/sequences.ts";

/**
 * Plays the task's oracle demonstration of each task index through the environment; every episode must succeed. A task
 * the oracle gives no plan for (Task.oracle) and one whose plan does not fit max_response_length are left out.
 */
export async function oracleEpisodes(
  ctx: { tokenizer: Tokenizer; client: EnvClient; task: Task; stopId: number },
  indices: readonly number[],
  o: {
    /** The task's options (task_options), which may choose the demonstrations' reply layout. */
    options: TaskOptions;
    maxPromptLength: number;
    maxResponseLength: number;
    /** Told how many tasks were left out because their plan does not fit max_response_length. */
    onSkipped?: (count: number) => void;
    /** Told how many tasks the oracle gave no plan for (left out). */
    onUnplanned?: (count: number) => void;
    /** Replays of an episode whose environment failed (a transient error is no wrong demonstration). Default 0. */
    retries?: number;
  },
): Promise<Trajectory[]> {
  const oracle = ctx.task.oracle;
  if (!oracle) {
    throw new RangeError(
      `The ${ctx.task.name} task has no oracle to demonstrate it; set sft.data to a trajectory file`,
    );
  }
  const all = await Promise.all(indices.map((i) => oracle(i, o.options)));
  const planned = indices.flatMap((_, k) => (all[k].length > 0 ? [k] : []));
  o.onUnplanned?.(indices.length - planned.length);
  if (planned.length === 0) return [];
  const plans = planned.map((k) => all[k]);
  const tasks = planned.map((k) => indices[k]);
  const sampler = new ScriptedSampler(ctx.tokenizer, (seed) => plans[seed], ctx.stopId, {
    fallback: "Action: inventory",
  });
  const specs = tasks.map((task, i) => ({ task, group: i, seed: i }));
  const play = (chosen: typeof specs) =>
    runRollouts({ generator: sampler, tokenizer: ctx.tokenizer, client: ctx.client, task: ctx.task }, chosen, {
      maxRounds: Math.max(...plans.map((p) => p.length)),
      maxTokensPerTurn: 1 << 20,
      maxPromptLength: o.maxPromptLength,
      maxResponseLength: o.maxResponseLength,
      sampling: {},
      stopIds: [ctx.stopId],
    });
  const ts = await play(specs);
  for (let r = 0; r < (o.retries ?? 0); r++) {
    const again = ts.flatMap((t, i) => (t.finish === "env_failure" ? [i] : []));
    if (again.length === 0) break;
    const replayed = await play(again.map((i) => specs[i]));
    again.forEach((i, k) => (ts[i] = replayed[k]));
  }
  const envFailed = ts.filter((t) => t.finish === "env_failure");
  if (envFailed.length > 0) {
    throw new Error(
      `The environment failed ${envFailed.length} of ${ts.length} demonstration episodes after ${o.retries ?? 0} ` +
        `replays each (env.episode_retries), e.g. task ${envFailed[0].task}: ${envFailed[0].error}. Check the ` +
        "server, or raise env.episode_retries or env.retries for a flaky one.",
    );
  }
  // An oracle plan longer than the token budget cannot be shown whole; such tasks are left out (and counted).
  // Any other failure means the environment or the plans are wrong, and stops the run.
  const broken = ts.filter((t) => !t.success && t.finish !== "length");
  if (broken.length > 0) {
    const t = broken[0];
    const why = `${t.finish}${t.error ? `: ${t.error}` : ""}`;
    throw new Error(`The oracle failed ${broken.length} of ${ts.length} episodes, e.g. task ${t.task} (${why})`);
  }
  const kept = ts.filter((t) => t.success);
  o.onSkipped?.(ts.length - kept.length);
  return kept;
}

/** The oracle's episodes as training sequences, exactly as they were played. */
export async function oracleSequences(
  ctx: Parameters<typeof oracleEpisodes>[0],
  indices: readonly number[],
  o: Parameters<typeof oracleEpisodes>[2],
): Promise<TrainSequence[]> {
  const ts = await oracleEpisodes(ctx, indices, o);
  return ts.map((t) => ({ ids: [...t.promptIds, ...t.responseIds], promptLength: t.promptIds.length, mask: t.mask }));
}

/** An episode's texts as played. */
export function textEpisode(t: Trajectory): TextEpisode {
  return { opening: t.firstObservation, turns: t.turns.map((x) => ({ reply: x.text, observation: x.observation })) };
}

/**
 * Renders an episode's text (the same layout a rollout produces): the prompt with the opening, each reply with the
 * stop id (mask 1), each observation chunk (mask 0). A misread reply is context only: mask 0 and `ignore` 1, so
 * not even a context loss scores it.
 */
export function episodeSequence(
  chat: ChatRenderer,
  prompt: { user: string; assistant: string },
  episode: TextEpisode,
  stopId: number,
): TrainSequence {
  const ids = chat.prompt({ user: prompt.user, assistant: prompt.assistant, observation: episode.opening });
  const promptLength = ids.length, mask: number[] = [], ignore: number[] = [];
  episode.turns.forEach((turn, k) => {
    const reply = [...chat.tokenizer.encode(turn.reply), stopId];
    ids.push(...reply);
    mask.push(...reply.map(() => (turn.misread ? 0 : 1)));
    ignore.push(...reply.map(() => (turn.misread ? 1 : 0)));
    if (k === episode.turns.length - 1) return;
    const chunk = chat.observation(turn.observation, stopId);
    ids.push(...chunk);
    mask.push(...chunk.map(() => 0));
    ignore.push(...chunk.map(() => 0));
  });
  return episode.turns.some((t) => t.misread) ? { ids, promptLength, mask, ignore } : { ids, promptLength, mask };
}

/**
 * Sequences of the demonstrations for one epoch: each episode as played, or as the task's augmentation rewrites it
 * for that epoch (TextCraft: renamed items, fewer distractors early). Seeded by (seed, epoch, episode), so a
 * resumed run sees the same data.
 */
export function augmentedEpochs(
  chat: ChatRenderer,
  prompt: { user: string; assistant: string },
  episodes: readonly TextEpisode[],
  o: {
    stopId: number;
    seed: number;
    epochs: number;
    augment?: (episode: TextEpisode, c: AugmentContext) => TextEpisode;
  },
): (epoch: number) => TrainSequence[] {
  return (epoch) =>
    episodes.map((episode, i) => {
      const rng = new Rng(o.seed * 1009 + epoch * 7919 + i * 31337);
      const shown = o.augment ? o.augment(episode, { rng, epoch, epochs: o.epochs }) : episode;
      return episodeSequence(chat, prompt, shown, o.stopId);
    });
}

const Turn = z.object({ from: z.string(), value: z.string(), loss: z.boolean().nullish() }).loose();
const Message = z.object({ role: z.string(), content: z.string() }).loose();
const Entry = z.object({ conversations: z.array(Turn).min(3).optional(), messages: z.array(Message).min(3).optional() })
  .loose().refine((e) => (e.conversations === undefined) !== (e.messages === undefined));

/** One entry's turns as AgentGym writes them; chat `messages` map user to human, assistant to gpt. */
function turnsOf(entry: z.infer<typeof Entry>): z.infer<typeof Turn>[] {
  if (entry.conversations) return entry.conversations;
  const ms = entry.messages!;
  // A system message has no place in the layout RL trains on: it opens the first user turn instead.
  const system = ms[0].role === "system" ? ms[0].content : undefined;
  const rest = system === undefined ? ms : ms.slice(1);
  return rest.map((m, i) => ({
    from: m.role === "assistant" ? "gpt" : "human",
    value: i === 0 && system !== undefined ? `${system}\n\n${m.content}` : m.content,
  }));
}

/** The entries of a JSON array or JSONL file; a bad line is a SyntaxError naming its line number. */
function entries(text: string, source: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === "") throw new SyntaxError(`${source} is empty: SFT needs at least one conversation`);
  if (trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed);
    } catch (e) {
      throw new SyntaxError(`${source}: not a JSON array (${(e as Error).message})`);
    }
  }
  const out: unknown[] = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try {
      out.push(JSON.parse(line));
    } catch (e) {
      throw new SyntaxError(`${source} line ${i + 1}: not JSON (${(e as Error).message})`);
    }
  });
  return out;
}

/**
 * Reads supervised trajectories: AgentGym's `{"conversations": [{"from", "value", "loss"?}]}` or the chat
 * `{"messages": [{"role", "content"}]}` of TRL and OpenAI, as a JSON array or JSONL. Human/gpt (user/assistant)
 * turns alternate after an opening (instructions, acknowledgement, first observation); gpt turns train unless
 * `loss` is false; the acknowledgement is prompt.
 */
export function agentGymSequences(text: string, tok: Tokenizer, stopId: number, source: string): TrainSequence[] {
  const items = entries(text, source);
  if (items.length === 0) throw new SyntaxError(`${source} holds no conversation: SFT needs at least one`);
  const chat = new ChatRenderer(tok);
  return items.map((item, n) => {
    const r = Entry.safeParse(item);
    if (!r.success) {
      throw new SyntaxError(
        `${source} entry ${n + 1}: needs "conversations" of from/value turns or "messages" of role/content ones`,
      );
    }
    const turns = turnsOf(r.data);
    const role = (i: number) => (turns[i].from === "gpt" || turns[i].from === "assistant" ? "gpt" : "human");
    if (turns.length < 3 || role(0) !== "human" || role(1) !== "gpt" || role(2) !== "human") {
      throw new SyntaxError(`${source} entry ${n + 1}: must open with human, gpt, human (user, assistant, user) turns`);
    }
    const prompt = chat.prompt({ user: turns[0].value, assistant: turns[1].value, observation: turns[2].value });
    const ids = [...prompt], mask: number[] = [];
    for (let i = 3; i < turns.length; i++) {
      if (role(i) !== (i % 2 === 1 ? "gpt" : "human")) {
        throw new SyntaxError(`${source} entry ${n + 1}: turn ${i + 1} should be ${i % 2 === 1 ? "gpt" : "human"}`);
      }
      const piece = role(i) === "gpt"
        ? [...tok.encode(turns[i].value), stopId]
        : chat.observation(turns[i].value, stopId);
      const train = role(i) === "gpt" && turns[i].loss !== false ? 1 : 0;
      ids.push(...piece);
      mask.push(...piece.map(() => train));
    }
    return { ids, promptLength: prompt.length, mask };
  });
}
