/**
 * The play page's agent, without the page: one conversation token for token as Crucible's episode loop builds it
 * (src/rollout/agent.ts): the opening rendered by the chat template with the checkpoint's prompt, each reply's
 * sampled ids (stop id included), then the environment's answer as an observation chunk. A person's move enters the
 * conversation as the assistant's text `Action: <move>`, so the agent can take over at any turn. When the
 * conversation no longer matches the sampler's cache (a person played something else than the suggestion), the
 * next reply re-reads it whole in one prefill.
 */
import type { Tokenizer } from "../model/tokenizer.ts";
import type { OnnxSampler } from "../onnx/sampler.ts";
import { ChatRenderer } from "../rollout/chat.ts";

/** One reply of the agent. */
export interface AgentReply {
  /** The text sent to the environment (stop token dropped, special tokens skipped). */
  text: string;
  ids: number[];
  /** Whether the reply ended with a stop id (false: its token budget or the conversation's length ran out). */
  stopped: boolean;
}

/** What the agent plays with. */
export interface PageAgentSettings {
  prompt: { user: string; assistant: string };
  maxTokensPerTurn: number;
  temperature: number;
  stopIds: readonly number[];
  /** Seed of the sampling stream (used when temperature > 0). */
  seed?: number;
}

/** The agent's side of one game. */
export class PageAgent {
  readonly #chat: ChatRenderer;
  #ids: number[] = [];
  #seq: number | undefined;
  #synced = false;
  #suggestion: AgentReply | undefined;

  constructor(readonly sampler: OnnxSampler, readonly tokenizer: Tokenizer, readonly settings: PageAgentSettings) {
    this.#chat = new ChatRenderer(tokenizer);
  }

  /** The whole conversation so far, as token ids (prompt, replies, observation chunks). */
  get ids(): readonly number[] {
    return this.#ids;
  }

  /** Starts a game from the environment's first observation. */
  start(observation: string): void {
    this.#ids = this.#chat.prompt({ ...this.settings.prompt, observation });
    this.#synced = false;
    this.#suggestion = undefined;
  }

  /** The agent's next reply to the conversation so far (not yet part of it: see `record`). */
  async reply(): Promise<AgentReply> {
    if (!this.#synced || this.#suggestion) {
      if (this.#seq !== undefined) this.sampler.close(this.#seq);
      this.#seq = this.sampler.open(this.#ids, this.settings.seed ?? 0);
      this.#synced = true;
    }
    const [g] = await this.sampler.decode([this.#seq!], [{
      maxNewTokens: this.settings.maxTokensPerTurn,
      stopIds: this.settings.stopIds,
    }], { temperature: this.settings.temperature });
    const stopped = g.finish === "stop";
    const text = this.tokenizer.decode(stopped ? g.ids.slice(0, -1) : g.ids, { skipSpecialTokens: true });
    this.#suggestion = { text, ids: g.ids, stopped };
    return this.#suggestion;
  }

  /** A turn was played with reply `text` and the environment answered `observation`. */
  record(text: string, observation: string): void {
    const s = this.#suggestion;
    this.#suggestion = undefined;
    if (s && s.text === text && this.#synced) {
      const chunk = this.#chat.observation(observation, s.stopped ? s.ids[s.ids.length - 1] : undefined);
      this.#ids.push(...s.ids, ...chunk);
      this.sampler.append(this.#seq!, chunk);
      return;
    }
    this.#ids.push(...this.tokenizer.encode(text), ...this.#chat.observation(observation));
    this.#synced = false;
  }
}
