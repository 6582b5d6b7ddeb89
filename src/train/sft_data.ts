/**
 * Supervised data in the exact token layout RL trains on: the prompt and observation chunks rendered by the chat
 * template (mask 0), assistant turns as their ids plus the stop token (mask 1 where the turn is trained).
 * Sources: oracle episodes of TextCraft played through the environment, or AgentGym trajectory files
 * (`{"conversations": [{"from": "human"|"gpt", "value": ..., "loss": ...}]}`, JSON array or JSONL).
 */
import { z } from "zod";
import type { EnvClient } from "../env/client.ts";
import { TextCraftGame } from "../env/textcraft/game.ts";
import { solveTask } from "../env/textcraft/oracle.ts";
import { CraftingTree } from "../env/textcraft/tree.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { runRollouts } from "../rollout/agent.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import { ScriptedSampler } from "../rollout/scripted.ts";
import type { Task } from "../../tasks/task.ts";
import { Rng } from "../gpu/random.ts";
import type { ItemRenamer } from "../env/textcraft/rename.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import type { TrainSequence } from "./sequences.ts";
import type { RunConfig } from "../config/schema.ts";

/** The layouts of an oracle reply, as the config schema lists them (sft.oracle_format). */
export type OracleFormat = RunConfig["sft"]["oracle_format"];

/** An oracle reply: "recipe" puts the command-list line it works on (`line`) first, "tail" the line from its item. */
export function oracleReply(action: string, format: OracleFormat, line?: string): string {
  if (format === "thought") return `Thought:\nI will ${action} next.\n\nAction:\n${action}`;
  if (format === "action" || !line) return `Action: ${action}`;
  return `Thought: ${format === "tail" ? line.replace(/^craft \d+ /, "") : line}\nAction: ${action}`;
}

/**
 * For each oracle action, the line of the task's command list it works on: a craft's own recipe line, and for a
 * get, the line of the first later craft that uses the item. Writing that line first turns choosing an action into
 * copying from the context, which a small model learns far sooner.
 */
export function recipeLines(opening: string, actions: readonly string[]): (string | undefined)[] {
  const parse = (l: string) => /^craft (\d+) (.+?) using (.+)$/.exec(l);
  const lines = opening.split("\n").map(parse).filter((m) => m !== null);
  const inputs = (list: string) => list.split(", ").map((p) => /^(\d+) (.+)$/.exec(p) ?? ["", "", p]);
  // The line of a craft: same output, same counts, and each input the same or a kind of it (oak planks / planks).
  const lineOf = (craft: RegExpExecArray) => {
    const want = inputs(craft[3]);
    const same = lines.filter((l) => l[2] === craft[2]);
    const match = same.find((l) => {
      const have = inputs(l[3]);
      return have.length === want.length &&
        have.every((h, k) => h[1] === want[k][1] && (h[2] === want[k][2] || want[k][2].endsWith(` ${h[2]}`)));
    });
    return (match ?? same[0])?.[0];
  };
  const crafts = actions.map(parse);
  return actions.map((a, i) => {
    const craft = crafts[i];
    if (craft) return lineOf(craft);
    const item = /^get \d+ (.+)$/.exec(a)?.[1];
    const consumer = item === undefined
      ? undefined
      : crafts.find((c, k) => k > i && c && inputs(c[3]).some((p) => p[2] === item));
    return consumer ? lineOf(consumer) : undefined;
  });
}

/** Plays the oracle's plan of each task through the environment; every episode must succeed. */
export async function oracleEpisodes(
  ctx: { tokenizer: Tokenizer; client: EnvClient; task: Task; stopId: number },
  indices: readonly number[],
  o: {
    format: OracleFormat;
    maxPromptLength: number;
    maxResponseLength: number;
    /** Told how many tasks were left out because their plan does not fit max_response_length. */
    onSkipped?: (count: number) => void;
  },
): Promise<Trajectory[]> {
  if (ctx.task.name !== "textcraft") {
    throw new RangeError(`Oracle trajectories exist for textcraft only, not ${ctx.task.name}; set sft.data to a file`);
  }
  const tree = await CraftingTree.load();
  const game = new TextCraftGame(tree);
  const plans = indices.map((i) => {
    const actions = solveTask(tree, i).actions;
    // Formats without a quoted line ignore it.
    const lines = recipeLines(game.reset(BigInt(i)), actions);
    return actions.map((a, k) => oracleReply(a, o.format, lines[k]));
  });
  const sampler = new ScriptedSampler(ctx.tokenizer, (seed) => plans[seed], ctx.stopId, {
    fallback: "Action: inventory",
  });
  const specs = indices.map((task, i) => ({ task, group: i, seed: i }));
  const ts = await runRollouts(
    { generator: sampler, tokenizer: ctx.tokenizer, client: ctx.client, task: ctx.task },
    specs,
    {
      maxRounds: Math.max(...plans.map((p) => p.length)),
      maxTokensPerTurn: 1 << 20,
      maxPromptLength: o.maxPromptLength,
      maxResponseLength: o.maxResponseLength,
      sampling: {},
      stopIds: [ctx.stopId],
    },
  );
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

/**
 * Renders an episode's text again (the same layout a rollout produces) after passing every text through `edit`:
 * the prompt with the first observation, each reply with the stop id (mask 1), each observation chunk (mask 0).
 */
export function episodeSequence(
  chat: ChatRenderer,
  prompt: { user: string; assistant: string },
  t: Trajectory,
  stopId: number,
  edit: (text: string) => string = (x) => x,
): TrainSequence {
  const ids = chat.prompt({ user: prompt.user, assistant: prompt.assistant, observation: edit(t.firstObservation) });
  const promptLength = ids.length, mask: number[] = [];
  t.turns.forEach((turn, k) => {
    const reply = [...chat.tokenizer.encode(edit(turn.text)), stopId];
    ids.push(...reply);
    mask.push(...reply.map(() => 1));
    if (k === t.turns.length - 1) return;
    const chunk = chat.observation(edit(turn.observation), stopId);
    ids.push(...chunk);
    mask.push(...chunk.map(() => 0));
  });
  return { ids, promptLength, mask };
}

/**
 * Sequences of the oracle's TextCraft episodes for one epoch: each episode is kept as played, or, with probability
 * `renameShare`, with its items renamed by a fresh random permutation (src/env/textcraft/rename.ts). Seeded by
 * (seed, epoch, episode), so a resumed run sees the same data.
 */
export function renamedEpochs(
  chat: ChatRenderer,
  prompt: { user: string; assistant: string },
  episodes: readonly Trajectory[],
  o: {
    stopId: number;
    renamer?: ItemRenamer;
    renameShare: number;
    seed: number;
    /** Share of distractor lines dropped from the command list in the first epoch, falling to 0 by the last. */
    dropDistractors?: number;
    epochs?: number;
  },
): (epoch: number) => TrainSequence[] {
  const used = episodes.map((t) => new Set(recipeLines(t.firstObservation, t.turns.map((x) => x.action ?? ""))));
  return (epoch) =>
    episodes.map((t, i) => {
      const rng = new Rng(o.seed * 1009 + epoch * 7919 + i * 31337);
      const last = Math.max(1, Math.ceil(o.epochs ?? 1) - 1);
      const drop = (o.dropDistractors ?? 0) * Math.max(0, 1 - epoch / last);
      const opening = (text: string) =>
        text.split("\n").filter((l) => !l.startsWith("craft ") || used[i].has(l) || rng.float() >= drop).join("\n");
      const shown = drop > 0 ? { ...t, firstObservation: opening(t.firstObservation) } : t;
      const renamer = o.renamer;
      if (!renamer || rng.float() >= o.renameShare) return episodeSequence(chat, prompt, shown, o.stopId);
      const map = renamer.permutation(rng);
      return episodeSequence(chat, prompt, shown, o.stopId, (text) => renamer.apply(text, map));
    });
}

const Turn = z.object({ from: z.string(), value: z.string(), loss: z.boolean().nullish() }).loose();
const Conversation = z.object({ conversations: z.array(Turn).min(3) }).loose();

/**
 * Reads AgentGym trajectories: human/gpt turns alternate after an opening (instructions, acknowledgement, first
 * observation). gpt turns train unless `loss` is false; the acknowledgement is prompt.
 */
export function agentGymSequences(text: string, tok: Tokenizer, stopId: number, source: string): TrainSequence[] {
  const trimmed = text.trim();
  let items: unknown[];
  try {
    items = trimmed.startsWith("[")
      ? JSON.parse(trimmed)
      : trimmed.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
  } catch (e) {
    throw new SyntaxError(`${source}: not JSON or JSONL (${(e as Error).message})`);
  }
  const chat = new ChatRenderer(tok);
  return items.map((item, n) => {
    const r = Conversation.safeParse(item);
    if (!r.success) throw new SyntaxError(`${source} entry ${n}: needs "conversations" of from/value turns`);
    const turns = r.data.conversations;
    const role = (i: number) => (turns[i].from === "gpt" || turns[i].from === "assistant" ? "gpt" : "human");
    if (role(0) !== "human" || role(1) !== "gpt" || role(2) !== "human") {
      throw new SyntaxError(`${source} entry ${n}: must open with human, gpt, human turns`);
    }
    const prompt = chat.prompt({ user: turns[0].value, assistant: turns[1].value, observation: turns[2].value });
    const ids = [...prompt], mask: number[] = [];
    for (let i = 3; i < turns.length; i++) {
      if (role(i) !== (i % 2 === 1 ? "gpt" : "human")) {
        throw new SyntaxError(`${source} entry ${n}: turn ${i} should be ${i % 2 === 1 ? "gpt" : "human"}`);
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
