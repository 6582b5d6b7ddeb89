/**
 * The built-in tiny model's tokenizer: a word-level vocabulary over a corpus, written as a real Hugging Face
 * `tokenizer.json` (model `WordLevel`, pre-tokenizer `Split`, decoder `Fuse`) so it runs through the same Tokenizer
 * code as Qwen's.
 *
 * Pre-tokens are a run of letters, one digit, one other non-space character, each with at most one leading space,
 * or a single whitespace character:
 *
 *   "Inventory: [oak planks] (4)" -> "Inventory" ":" " [" "oak" " planks" "]" " (" "4" ")"
 *
 * Every character of the text lands in exactly one pre-token and the Fuse decoder concatenates tokens with nothing
 * between them, so decode(encode(text)) === text whenever every pre-token is in the vocabulary. To make that hold for
 * any arrangement of known words, each word enters the vocabulary in both forms ("oak" and " oak"), and the digits,
 * ASCII punctuation and whitespace always do. Unknown pre-tokens become [UNK] (decoded as "[UNK]", its space lost).
 * Numbers are spelled digit by digit, as Qwen does, so every number is known.
 */
import { Tokenizer, type TokenizerFiles } from "./tokenizer.ts";

/** Pre-token pattern (Oniguruma syntax in the file, translated by the tokenizer library). */
export const WORD_PATTERN = " ?\\p{L}+| ?\\p{N}| ?[^\\s\\p{L}\\p{N}]|\\s";
/** Added special tokens, ids 0, 1, 2 in this order. */
export const WORD_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;
/** The unknown-word token, id 3. */
export const UNK = "[UNK]";

/** ChatML as Qwen writes it, without Qwen's default system prompt or tool calls. */
export const CHATML_TEMPLATE = "{%- for message in messages %}" +
  "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}" +
  "{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** Always in the vocabulary: chat roles, digits, printable ASCII punctuation and whitespace. */
const ALWAYS = ["system", "user", "assistant", ..."0123456789", ...punctuation(), " ", "\n", "\t", "\r"];

function punctuation(): string[] {
  const out: string[] = [];
  for (let c = 0x21; c < 0x7f; c++) {
    const ch = String.fromCharCode(c);
    if (!/[\p{L}\p{N}]/u.test(ch)) out.push(ch);
  }
  return out;
}

/** Options of a word-level vocabulary. */
export interface WordTokenizerOptions {
  /** Keep only the most frequent words (both forms of each). */
  maxWords?: number;
  /**
   * Multi-word names kept as single tokens (e.g. TextCraft's item names, "dark oak planks"), matched whole, longest
   * first, never inside a longer word. Copying one token from the context is far easier for a small model than
   * copying a run of them.
   */
  phrases?: readonly string[];
}

/** A regex alternation of phrases (with an optional leading space), longest first, ending in "|"; "" for none. */
export function phrasePattern(phrases: readonly string[]): string {
  const multi = [...new Set(phrases.filter((p) => /\s/.test(p.trim())).map((p) => p.trim()))];
  if (multi.length === 0) return "";
  multi.sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  const escaped = multi.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return ` ?(?:${escaped.join("|")})(?![\\p{L}\\p{N}])|`;
}

/**
 * Builds `tokenizer.json` and `tokenizer_config.json` for a word-level vocabulary of `corpus`. Ids: specials
 * 0-2, [UNK] 3, then pre-tokens by corpus frequency (descending), ties by code-unit order, so the same corpus
 * always gives the same ids. `maxWords` keeps only the most frequent words (both forms of each).
 *
 * @example
 * ```ts
 * const { tokenizer, config } = buildWordTokenizerFiles(["craft 4 oak planks using 1 oak log"]);
 * await Deno.writeTextFile("tokenizer.json", JSON.stringify(tokenizer, null, 2));
 * ```
 */
export function buildWordTokenizerFiles(
  corpus: Iterable<string>,
  opts: WordTokenizerOptions = {},
): TokenizerFiles {
  if (opts.maxWords !== undefined && !(Number.isInteger(opts.maxWords) && opts.maxWords >= 0)) {
    throw new RangeError(`Building a word tokenizer: maxWords ${opts.maxWords} must be a non-negative integer`);
  }
  const pattern = phrasePattern(opts.phrases ?? []) + WORD_PATTERN;
  const re = new RegExp(pattern, "gu");
  const counts = new Map<string, number>();
  for (const text of corpus) {
    for (const m of text.matchAll(re)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  // Merge the two forms of a word, so that a word's rank decides whether both forms are kept.
  const byWord = new Map<string, number>();
  for (const [piece, n] of counts) {
    const word = piece.length > 1 && piece.startsWith(" ") ? piece.slice(1) : piece;
    byWord.set(word, (byWord.get(word) ?? 0) + n);
  }
  for (const w of ALWAYS) if (!byWord.has(w)) byWord.set(w, 0);
  // Every phrase gets a token, even one the corpus never shows: a renamed text may use it.
  for (const p of opts.phrases ?? []) if (/\s/.test(p.trim()) && !byWord.has(p.trim())) byWord.set(p.trim(), 0);
  const order = (a: [string, number], b: [string, number]) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  let words = [...byWord].sort(order);
  if (opts.maxWords !== undefined) {
    const always = new Set(ALWAYS);
    const kept = new Set(words.filter(([w]) => !always.has(w)).slice(0, opts.maxWords).map(([w]) => w));
    words = words.filter(([w]) => always.has(w) || kept.has(w));
  }
  const pieces = new Map<string, number>();
  for (const [w] of words) {
    pieces.set(w, counts.get(w) ?? 0);
    if (!/^\s$/.test(w)) pieces.set(" " + w, counts.get(" " + w) ?? 0); // whitespace takes no leading space
  }
  const vocab: Record<string, number> = {};
  [...WORD_SPECIALS, UNK, ...[...pieces].sort(order).map(([p]) => p)].forEach((p, i) => vocab[p] = i);
  const added = WORD_SPECIALS.map((content, id) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const tokenizer = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false },
    post_processor: null,
    decoder: { type: "Fuse" },
    model: { type: "WordLevel", vocab, unk_token: UNK },
  };
  const config = {
    tokenizer_class: "PreTrainedTokenizerFast",
    added_tokens_decoder: Object.fromEntries(added.map(({ id, ...rest }) => [String(id), rest])),
    additional_special_tokens: ["<|im_start|>", "<|im_end|>"],
    bos_token: null,
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
    // The tokenizer library takes a WordLevel model's unknown token from here, not from tokenizer.json.
    unk_token: UNK,
    // Decoding must not "clean up" spaces before punctuation: the text has to round-trip exactly.
    clean_up_tokenization_spaces: false,
    model_max_length: 32768,
    chat_template: CHATML_TEMPLATE,
  };
  return { tokenizer, config };
}

/**
 * A Tokenizer over a word-level vocabulary of `corpus` (see buildWordTokenizerFiles).
 *
 * @example
 * ```ts
 * const tok = wordTokenizer(["Crafting commands:\ncraft 4 oak planks using 1 oak log"]);
 * tok.decode(tok.encode("craft 1 oak log")); // "craft 1 oak log"
 * ```
 */
export function wordTokenizer(corpus: Iterable<string>, opts: WordTokenizerOptions = {}): Tokenizer {
  const { tokenizer, config } = buildWordTokenizerFiles(corpus, opts);
  return Tokenizer.fromJson(tokenizer, config);
}
