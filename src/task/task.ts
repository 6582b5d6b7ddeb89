/**
 * What a task is: everything about one environment that is not the HTTP protocol — the conversation start, how
 * the model's text becomes an action, what counts as success, the default round limit and the task splits.
 */
import type { ActionParse } from "../env/client.ts";
import type { Adapter } from "../env/adapter.ts";
import type { GameServerOptions } from "../env/server/serve.ts";
import type { Rng } from "../util/random.ts";
import type { SeenSoFar } from "./anchor.ts";

/** The conversation start: the user's instructions and the assistant's acknowledgement. */
export interface Prompt {
  /** The first user message: the task's instructions. */
  user: string;
  /** The assistant's reply to them that opens the conversation (e.g. "OK."). */
  assistant: string;
}

/** An episode as text: the opening observation, then each reply and what the environment answered to it. */
export interface TextEpisode {
  /** The environment's first observation. */
  opening: string;
  /**
   * `misread` marks a deliberately wrong reply (recovery data): it stays in the context, with the environment's
   * failure message after it, but is never trained on, so the model learns the reply that follows a failure.
   */
  turns: { reply: string; observation: string; misread?: boolean }[];
}

/** A first observation's tool documents, split off for a chat template that reads `tools`, and the text left. */
export interface OpeningTools {
  /** The documents for the template's `tools` variable, in the shape the task's benchmark gives its models. */
  tools: object[];
  /** The observation without its tool list. */
  observation: string;
}

/** A task's settings under `task_options`, after the task checked them. */
export type TaskOptions = Readonly<Record<string, unknown>>;

/** Where an augmentation is: its generator (seeded per episode and epoch by the trainer) and the epoch. */
export interface AugmentContext {
  /** The augmentation's generator, seeded per episode and epoch by the trainer. */
  rng: Rng;
  /** 0-based epoch, of `epochs` (may be fractional: the last epoch is cut short). */
  epoch: number;
  /** How many epochs the SFT data runs for. */
  epochs: number;
}

/** A running environment server that a task embeds. */
export interface EmbeddedServer {
  /** Where it listens (http://127.0.0.1:PORT). */
  url: string;
  /** The environment's name as its server gives it ("TextCraft", "BFCL"), where it does. */
  title?: string;
  /** What it serves, in a few words, where the task says (WebShop: which catalogue and goals). */
  about?: string;
  /** Stops it. */
  shutdown(): Promise<void>;
}

/** What the built-in word-level tiny model's tokenizer is built from for a task. */
export interface TaskVocabulary {
  /** Texts whose words get tokens. */
  corpus: string[];
  /** Multi-word names kept as single tokens (see WordTokenizerOptions.phrases). */
  phrases: string[];
}

/** Synthetic pretraining data of a task: random tasks of its kind, never its real ones. */
export interface SyntheticTasks {
  /** A random demonstration; `progress` in [0, 1] moves the task's curriculum from easy to full difficulty. */
  episode(rng: Rng, progress: number): TextEpisode;
  /** Held-out task `index` of `seed`, played by the demonstration policy. */
  heldOut(seed: number, index: number): TextEpisode;
  /** Serves held-out synthetic tasks on a free loopback port: task index i is heldOut(seed, i)'s task. */
  serve(seed: number): Promise<EmbeddedServer>;
  /** The category of held-out task index i (TextCraft: its depth). */
  category(index: number): string;
  /** The names the tasks are made of, for generic copy strings. */
  names: readonly string[];
  /**
   * Phrases that stand between names in the task's text, written as they stand there (TextCraft: a recipe input's
   * count with the word before it, ` using 9`, `, 1`), for seek strings that alternate names and these
   * (pretrain.copy_seek_links).
   */
  links?: readonly string[];
  /** Whether an observation is the environment refusing an action (for the recovery rate of held-out episodes). */
  refused?(observation: string): boolean;
  /**
   * A look-up drill in the task's own words (pretrain.copy_drill): the pieces of one text, in order, where each
   * trained piece is what only a look-up in the untrained text before it finds (TextCraft: a command list, then
   * frames `X using` whose inputs are X's line). Pieces split where the tokenizer splits, so their tokens are the
   * whole text's.
   */
  drill?(rng: Rng, progress: number): DrillPiece[];
}

/** One piece of a look-up drill (SyntheticTasks.drill). */
export interface DrillPiece {
  /** The piece's text. */
  text: string;
  /** Whether the loss is taken on it (the answer) or not (the question). */
  trained: boolean;
}

/**
 * Fresh worlds of a task's kind for RL prompts beside its train split (`data.synthetic_prompts`): drawn from a seed,
 * never one of the task's real tasks that the run excludes (its test split). Worlds are task indices at and past
 * `first`, so they travel through the trainer, the trainer state and the cluster as any prompt does.
 */
export interface RlWorlds {
  /** The task index of world 0: world k is `first + k`; every index below `first` is one of the task's own tasks. */
  readonly first: number;
  /** Serves the task's own tasks and the worlds side by side on a free loopback port (the run's embedded server). */
  serve(): Promise<EmbeddedServer>;
}

/** Where RL worlds come from: their seed, and the task indices whose tasks they must never be (the test split). */
export interface RlWorldsOptions {
  /** The worlds' seed (data.synthetic_prompts.seed): world k is drawn from it and k alone. */
  seed: number;
  /** Task indices no world may be (the run's test split). */
  exclude: readonly number[];
}

/** A pretraining recipe as a base model's card reads it: the run's `pretrain` and `task_options` sections, raw. */
export interface PretrainRecipe {
  /** The run config's `pretrain` section. */
  pretrain: Readonly<Record<string, unknown>>;
  /** The run config's `task_options`. */
  taskOptions: Readonly<Record<string, unknown>>;
}

/** What a base model's card says about a task's pretraining (src/pretrain/base_model.ts writes the rest). */
export interface BaseModelWords {
  /** How the word-level vocabulary treats the task's names (TextCraft: "one token per item name"). */
  vocabulary: string;
  /** What pretraining read and what the model is the base of, ending the card's first paragraph. */
  trainedOn: string;
  /** The card's "Data" section: how the synthetic tasks are made, from the recipe. */
  data: string;
  /** What the held-out tasks are (TextCraft: "synthetic worlds"). */
  heldOut: string;
  /** What the copy score counts (TextCraft: "item names"). */
  names: string;
  /** What the look-up drills' link tokens are, when the task has them (TextCraft: "the counts"). */
  links?: string;
}

/**
 * One environment task. The optional hooks are the task's own training knowledge; the trainer calls them and never
 * tests a task's name.
 */
export interface Task {
  /** The task's name, also its item-id prefix (`textcraft_12`). */
  readonly name: string;
  /**
   * The protocol its servers speak (src/env/adapters/<env>.ts), whose name is the environment's: tasks/mod.ts lists
   * the environments from the tasks' adapters.
   */
  readonly adapter: Adapter;
  /** Crucible's own wording of the upstream instructions; see `loadPrompt` to use another. */
  readonly prompt: Prompt;
  /** The model's text -> the action to send, or a local reply. */
  parseAction(text: string): ActionParse;
  /**
   * Whether an episode counts as solved, from its final reward and what the server said with it (`info`, where its
   * adapter keeps one: BFCL's `passed`, which holds under any reward mode).
   */
  isSuccess(reward: number, info?: Readonly<Record<string, unknown>>): boolean;
  /** Default round limit of an episode. */
  readonly maxRounds: number;
  /**
   * The least and the most an episode's reward can be under `options` (a cluster's learner refuses a reward outside
   * it); without it, {@linkcode DEFAULT_REWARD_RANGE}.
   */
  rewardRange?(options: TaskOptions): readonly [number, number];
  /** Built-in splits of task indices, where the task publishes them (else item files are needed). */
  readonly splits?: Readonly<Record<string, readonly number[]>>;
  /**
   * The category of a task index for per-category results (TextCraft: its crafting depth). `info` is what the
   * environment said about the task when an episode reset to it (Trajectory.taskInfo), where it said something: a
   * task whose server labels its tasks reads the label there, so results follow what was served.
   */
  category?(index: number, info?: Readonly<Record<string, unknown>>): string;
  /**
   * Further groups a task index belongs to, for results by group (BFCL: `class GorillaFileSystem`, ...); `info` as
   * for `category`.
   */
  groups?(index: number, info?: Readonly<Record<string, unknown>>): string[];
  /**
   * The task's own name for a task index, shown beside the index in the run's logs and report (BFCL: the entry's id,
   * `multi_turn_miss_func_3`); undefined where it has none. `info` as for `category`.
   */
  label?(index: number, info?: Readonly<Record<string, unknown>>): string | undefined;
  /**
   * The `task_options` keys that choose which tasks the task's server holds (BFCL: its data directory and the
   * generated set's classes and categories). `deno task eval` plays a checkpoint on the set its crucible.json names
   * unless a `--task-option` names the key.
   */
  readonly setOptions?: readonly string[];
  /** Checks `task_options` and fills defaults; errors name the key. Tasks without it accept no options. */
  parseOptions?(raw: unknown): TaskOptions;
  /**
   * Starts the task's own server. A run that names no server starts it on a free loopback port (`at` left out);
   * `deno task serve NAME` passes where and how to listen (`at`: port, interface, keys, limits), the port left unset
   * for the task's usual one (AgentGym's). A task without it is played on its upstream server alone.
   */
  serve?(options: TaskOptions, at?: GameServerOptions): Promise<EmbeddedServer>;
  /**
   * The request handler of the server `serve` starts (the same games, options and routes), for a run that plays the
   * task in its own process with no server to listen: the studio page, in a browser (RunOptions.inProcessEnv).
   */
  handler?(options: TaskOptions): Promise<(req: Request) => Promise<Response>>;
  /**
   * The option keys set in `options` that only the task's embedded server honours (TextCraft: its shaped rewards,
   * which upstream's servers never pay); a run refuses them with external servers (env.urls).
   */
  embeddedOnly?(options: TaskOptions): string[];
  /** The vocabulary of the built-in tiny model for this task, given the run's prompt. */
  vocabulary?(prompt: Prompt): Promise<TaskVocabulary>;
  /**
   * The replies of a demonstration that solves task `index` (played through the environment by the trainer); none
   * (an empty list) where the oracle's way of playing, as `options` choose it, does not solve that task: the task is
   * then left out of the demonstrations, and counted.
   */
  oracle?(index: number, options: TaskOptions): Promise<string[]>;
  /** A per-epoch rewrite of demonstrations (e.g. renamed items), or undefined when the options ask for none. */
  augment?(options: TaskOptions): Promise<((episode: TextEpisode, c: AugmentContext) => TextEpisode) | undefined>;
  /** Synthetic tasks for pretraining a base model. */
  synthetic?(options: TaskOptions): Promise<SyntheticTasks>;
  /** Fresh synthetic worlds for RL prompts beside the train split (`data.synthetic_prompts`). */
  rlWorlds?(options: TaskOptions, o: RlWorldsOptions): Promise<RlWorlds>;
  /**
   * The tool documents a first observation lists, split off so that a model whose chat template reads `tools` gets
   * them there (as Hugging Face's apply_chat_template passes them) rather than pasted in the text; undefined when the
   * observation lists none. Templates that do not read `tools` keep the observation as it is.
   */
  tools?(observation: string): OpeningTools | undefined;
  /** The words of a base model's card about this task's synthetic data, given the run's recipe. */
  baseModelWords?(recipe: PretrainRecipe): BaseModelWords;
  /**
   * What identifies the state a turn acts from, as a key: positions of one prompt's episodes with equal keys are one
   * state, whose turns GiGPO compares (src/rl/gigpo.ts). From what the client has seen so far (anchor.ts); without
   * the hook the observation text is the state. Two positions that differ in anything the rest of the episode depends
   * on should differ in key (TextCraft: the inventory, which "Got 1 oak log" does not show).
   */
  anchor?(seen: SeenSoFar): string;
}

/** The reward range of a task that declares none: AgentGym's rewards (SciWorld's score of -100 to 100 the widest). */
export const DEFAULT_REWARD_RANGE: readonly [number, number] = [-100, 100];

/** A task's reward range under `options`. */
export function rewardRange(task: Task, options: TaskOptions): readonly [number, number] {
  return task.rewardRange?.(options) ?? DEFAULT_REWARD_RANGE;
}

/** Upstream's evaluator: a final reward of 1, or 100 for SciWorld's score. */
export function upstreamSuccess(reward: number): boolean {
  return reward === 1 || reward === 100;
}

/** The part after the first `Action:` (or the whole text), trimmed: BabyAI's and SciWorld's clients' rule. */
export function afterAction(text: string): string {
  // Upstream drops a trailing "</s>" with action[:-5], one character more than the tag's four.
  const t = text.endsWith("</s>") ? text.slice(0, -5) : text;
  const parts = t.split("Action:");
  return (parts.length > 1 ? parts[1] : parts[0]).trim();
}

/**
 * Reads a prompt file for a config that wants other wording (e.g. upstream's exact text): a JSON object
 * `{"user": ..., "assistant": ...}`, or plain text used as the user message with `fallback`'s acknowledgement.
 */
export async function loadPrompt(path: string | URL, fallback: Prompt): Promise<Prompt> {
  const text = await Deno.readTextFile(path);
  if (!text.trimStart().startsWith("{")) return { user: text, assistant: fallback.assistant };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`Prompt file ${path} starts with "{" but is not JSON: ${(e as Error).message}`);
  }
  const v = value as Partial<Prompt>;
  if (typeof v.user !== "string" || (v.assistant !== undefined && typeof v.assistant !== "string")) {
    throw new SyntaxError(`Prompt file ${path} must hold {"user": string, "assistant"?: string}`);
  }
  return { user: v.user, assistant: v.assistant ?? fallback.assistant };
}
