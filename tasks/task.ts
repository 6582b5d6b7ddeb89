/**
 * What a task is: everything about one environment that is not the HTTP protocol — the conversation start, how
 * the model's text becomes an action, what counts as success, the default round limit and the task splits.
 */
import type { ActionParse } from "../src/env/client.ts";
import type { EnvName } from "../src/env/adapters/mod.ts";

/** The conversation start: the user's instructions and the assistant's acknowledgement. */
export interface Prompt {
  user: string;
  assistant: string;
}

/** One environment task. */
export interface Task {
  /** The task's name, also its item-id prefix (`textcraft_12`). */
  readonly name: string;
  /** The adapter that talks to its server. */
  readonly env: EnvName;
  /** Crucible's own wording of the upstream instructions; see `loadPrompt` to use another. */
  readonly prompt: Prompt;
  /** The model's text -> the action to send, or a local reply. */
  parseAction(text: string): ActionParse;
  /** Whether an episode's final reward counts as solved. */
  isSuccess(reward: number): boolean;
  /** Default round limit of an episode. */
  readonly maxRounds: number;
  /** Built-in splits of task indices, where the task publishes them (else item files are needed). */
  readonly splits?: Readonly<Record<string, readonly number[]>>;
  /** The category of a task index for per-category results (TextCraft: its crafting depth). */
  category?(index: number): string;
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
