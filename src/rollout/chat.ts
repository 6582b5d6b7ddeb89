/**
 * Token-in/token-out chat rendering. The prompt and each environment reply are rendered with the model's chat
 * template; sampled ids are never decoded and re-encoded. An observation chunk holds everything between the end of
 * the assistant's text and the start of its next turn: the assistant's closing tag when the turn did not sample it,
 * the user turn with the observation, and the next assistant header. Given a task's `tools` hook and a template that
 * reads `tools` (Qwen2.5's), the opening's tool documents go to the template's `tools` variable instead of the text.
 */
import type { Tokenizer } from "../model/tokenizer.ts";
import type { Task } from "../task/task.ts";

/** A conversation start: instructions, the assistant's acknowledgement, and the environment's first observation. */
export interface Opening {
  /** The task's instructions, the first user message. */
  user: string;
  /** The assistant's acknowledgement of them. */
  assistant: string;
  /** The environment's first observation, the second user message. */
  observation: string;
}

// A string no template changes and no observation contains: where the assistant's text sits in a rendering.
const MARK = "\u2063CRUCIBLE-ASSISTANT-TEXT\u2063";

/** Renders chat pieces for one tokenizer. */
export class ChatRenderer {
  readonly #tools: Task["tools"];

  /** `tools` is the task's hook (Task.tools), used only when the template reads `tools`. */
  constructor(readonly tokenizer: Tokenizer, tools?: Task["tools"]) {
    this.#tools = tools && tokenizer.templateUses("tools") ? tools : undefined;
  }

  /** The prompt ids: the opening rendered with the generation prompt. */
  prompt(o: Opening): number[] {
    return this.tokenizer.encode(this.promptText(o));
  }

  /** The prompt's text; the opening's tool list in the template's `tools` where the renderer takes them. */
  promptText(o: Opening): string {
    const split = this.#tools?.(o.observation);
    return this.tokenizer.applyChatTemplate([
      { role: "user", content: o.user },
      { role: "assistant", content: o.assistant },
      { role: "user", content: split?.observation ?? o.observation },
    ], { addGenerationPrompt: true, variables: split ? { tools: split.tools } : undefined });
  }

  /**
   * The ids appended after an assistant turn for an environment reply. `sampledStop` is the stop id the turn
   * ended with, if any: when the chunk opens with that same token (the template's closing tag, e.g. <|im_end|>),
   * it is not repeated, since the turn already holds it with mask 1.
   */
  observation(text: string, sampledStop?: number): number[] {
    if (text.includes(MARK)) throw new RangeError("An observation contains Crucible's rendering marker");
    const r = this.tokenizer.applyChatTemplate([
      { role: "user", content: "q" },
      { role: "assistant", content: MARK },
      { role: "user", content: text },
    ], { addGenerationPrompt: true });
    const ids = this.tokenizer.encode(r.slice(r.indexOf(MARK) + MARK.length));
    return sampledStop !== undefined && ids[0] === sampledStop ? ids.slice(1) : ids;
  }
}
