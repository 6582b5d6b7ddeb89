/**
 * Tokenizers: a Hugging Face `tokenizer.json` run by `@huggingface/tokenizers`, with special tokens and the chat
 * template from `tokenizer_config.json` rendered by `@huggingface/jinja`. Qwen's BPE tokenizers and the built-in
 * word-level one (src/model/word_tokenizer.ts) go through this same code.
 */
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { Template, tokenize } from "@huggingface/jinja";

/** One chat message. Extra fields (tool calls, reasoning) pass through to the template. */
export interface ChatMessage {
  /** system, user, assistant or tool. */
  role: string;
  /** The message's text. */
  content: string;
  /** Anything else the chat template reads (tool_calls, reasoning_content, ...). */
  [field: string]: unknown;
}

/** The two JSON files a tokenizer is made of, as parsed objects. */
export interface TokenizerFiles {
  /** tokenizer.json. */
  tokenizer: Record<string, unknown>;
  /** tokenizer_config.json (its special tokens and chat template). */
  config: Record<string, unknown>;
}

/** A special token from tokenizer_config.json with its id. */
export interface SpecialToken {
  /** The token's text, e.g. `<|im_end|>`. */
  token: string;
  /** Its id in the vocabulary. */
  id: number;
}

/** The roles a special token may play (tokenizer_config.json's `bos_token`, `eos_token`, ...). */
export type SpecialRole = "bos" | "eos" | "pad" | "unk";

const ROLES: readonly SpecialRole[] = ["bos", "eos", "pad", "unk"];

/**
 * A loaded tokenizer.
 *
 * `encode` never adds tokens the text does not spell (no BOS/EOS), but special tokens written in the text, such as
 * `<|im_end|>`, ARE parsed into their ids, as Hugging Face does by default (`split_special_tokens=False`): a
 * rendered chat template depends on it. Text from an untrusted source may therefore contain special tokens.
 *
 * @example
 * ```ts
 * const tok = await Tokenizer.load("Qwen2.5-0.5B-Instruct");
 * const ids = tok.encode(tok.applyChatTemplate([{ role: "user", content: "hi" }], { addGenerationPrompt: true }));
 * ```
 */
export class Tokenizer {
  /** The files this tokenizer was made from (saved unchanged into checkpoints). */
  readonly files: TokenizerFiles;
  /** bos / eos / pad / unk tokens named in tokenizer_config.json, where present in the vocabulary. */
  readonly special: Partial<Record<SpecialRole, SpecialToken>>;
  /** Ids of every added special token (`<|endoftext|>`, `<|im_start|>`, `<|im_end|>`, ...). */
  readonly specialIds: ReadonlySet<number>;
  /** One more than the largest id; a model's vocab_size may be larger (padding rows). */
  readonly vocabSize: number;
  /**
   * Ids below the largest that no token has: holes in the vocabulary (a tokenizer.json that lost entries, or belongs
   * to another model). A model's own tokenizer has none; padding rows past the largest id are not holes.
   */
  readonly holes: number;
  #hf: HfTokenizer;
  #templates = new Map<string, Template>();

  private constructor(files: TokenizerFiles) {
    this.files = files;
    // Hugging Face's Rust reader defaults absent stages to null; the JS library insists on the keys.
    const stages = { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [] };
    this.#hf = new HfTokenizer({ ...stages, ...files.tokenizer }, files.config);
    let max = -1;
    for (const id of this.#hf.get_vocab(true).values()) max = Math.max(max, id);
    this.vocabSize = max + 1;
    let holes = 0;
    for (let id = 0; id < this.vocabSize; id++) if (this.#hf.id_to_token(id) === undefined) holes++;
    this.holes = holes;
    const ids = new Set<number>();
    for (const [id, t] of this.#hf.get_added_tokens_decoder()) if (t.special) ids.add(id);
    this.specialIds = ids;
    this.special = {};
    for (const role of ROLES) {
      const token = tokenName(files.config[`${role}_token`]);
      const id = token === undefined ? undefined : this.#hf.token_to_id(token);
      if (token !== undefined && id !== undefined) this.special[role] = { token, id };
    }
  }

  /** Builds a tokenizer from parsed `tokenizer.json` and `tokenizer_config.json`. */
  static fromJson(tokenizer: Record<string, unknown>, config: Record<string, unknown> = {}): Tokenizer {
    if (typeof tokenizer?.model !== "object") {
      throw new SyntaxError('Building a tokenizer: tokenizer.json has no "model" object');
    }
    return new Tokenizer({ tokenizer, config });
  }

  /** Loads `tokenizer.json` and (if present) `tokenizer_config.json` from a directory. */
  static async load(dir: string): Promise<Tokenizer> {
    const read = async (name: string, optional: boolean) => {
      let text: string;
      try {
        text = await Deno.readTextFile(`${dir}/${name}`);
      } catch (e) {
        if (optional && e instanceof Deno.errors.NotFound) return {};
        throw e;
      }
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new SyntaxError(`Reading ${dir}/${name}: ${(e as Error).message}`);
      }
    };
    return Tokenizer.fromJson(await read("tokenizer.json", false), await read("tokenizer_config.json", true));
  }

  /** Token ids of `text`, with no BOS/EOS added (see the class comment about special tokens in text). */
  encode(text: string, opts: { addSpecialTokens?: boolean } = {}): number[] {
    return this.#hf.encode(text, { add_special_tokens: opts.addSpecialTokens ?? false }).ids;
  }

  /** Text of `ids`. Ids the vocabulary lacks (a model's padding rows) decode to nothing, as in Hugging Face. */
  decode(ids: ArrayLike<number>, opts: { skipSpecialTokens?: boolean } = {}): string {
    const known: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0) throw new RangeError(`Decoding: token id ${id} at [${i}] is not an id`);
      if (this.#hf.id_to_token(id) !== undefined) known.push(id);
    }
    // The library refuses an empty list.
    return known.length === 0 ? "" : this.#hf.decode(known, { skip_special_tokens: opts.skipSpecialTokens ?? false });
  }

  /** The id of a token string, or undefined. */
  tokenToId(token: string): number | undefined {
    return this.#hf.token_to_id(token);
  }

  /** The id of a token string that must exist, e.g. `tok.id("<|im_end|>")`. */
  id(token: string): number {
    const id = this.#hf.token_to_id(token);
    if (id === undefined) throw new RangeError(`Token ${JSON.stringify(token)} is not in the vocabulary`);
    return id;
  }

  /** The token string of an id, or undefined. */
  idToToken(id: number): string | undefined {
    return this.#hf.id_to_token(id);
  }

  /**
   * Renders messages with the chat template of tokenizer_config.json. `name` picks one of a list of named
   * templates (default: "tool_use" when `variables.tools` is given and the list has it, as Hugging Face picks, else
   * "default"); `variables` reach the template too (e.g. `{enable_thinking: false}` for Qwen3, `{tools}`).
   */
  applyChatTemplate(
    messages: ChatMessage[],
    opts: { addGenerationPrompt?: boolean; name?: string; variables?: Record<string, unknown> } = {},
  ): string {
    const name = opts.name ?? this.#defaultTemplate(opts.variables?.tools !== undefined);
    let template = this.#templates.get(name);
    if (!template) {
      template = new Template(chatTemplateSource(this.files.config.chat_template, name));
      this.#templates.set(name, template);
    }
    const specials: Record<string, unknown> = {};
    for (const role of ROLES) specials[`${role}_token`] = tokenName(this.files.config[`${role}_token`]) ?? "";
    return template.render({
      ...specials,
      ...opts.variables,
      messages,
      add_generation_prompt: opts.addGenerationPrompt ?? false,
    });
  }

  /**
   * Whether the chat template reads a variable (e.g. `tools`): a name among the template's identifiers, so text in
   * its string literals (`<tools>`) does not count. With `tools`, the template Hugging Face would pick for tools.
   */
  templateUses(variable: string): boolean {
    const t = this.files.config.chat_template;
    if (t === undefined) return false;
    const source = chatTemplateSource(t, this.#defaultTemplate(variable === "tools"));
    return tokenize(source).some((k) => k.type === "Identifier" && k.value === variable);
  }

  /** "tool_use" where tools are given and a named list has it; else "default". */
  #defaultTemplate(withTools: boolean): string {
    const t = this.files.config.chat_template;
    return withTools && Array.isArray(t) && t.some((x) => x?.name === "tool_use") ? "tool_use" : "default";
  }
}

/** A special token entry is a string or (older files) an AddedToken object `{content: ...}`. */
function tokenName(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "object" && v !== null && typeof (v as { content?: unknown }).content === "string") {
    return (v as { content: string }).content;
  }
  return undefined;
}

/** `chat_template` is a string or a list of `{name, template}`. */
function chatTemplateSource(t: unknown, name: string): string {
  if (typeof t === "string") return t;
  if (Array.isArray(t)) {
    const found = t.find((x) => x?.name === name);
    if (typeof found?.template === "string") return found.template;
    const names = t.map((x) => x?.name).join(", ");
    throw new RangeError(`Chat template "${name}" is not in tokenizer_config.json; it has ${names}`);
  }
  throw new SyntaxError("Rendering a chat: tokenizer_config.json has no chat_template (a string or named list)");
}
