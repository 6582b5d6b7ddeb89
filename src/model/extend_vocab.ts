/**
 * Extending a trained word-level model's vocabulary without changing what it computes: the tokens a task's vocabulary
 * has today (new multi-word phrases, new words) are APPENDED to the model's own tokenizer, after its last id, and the
 * embedding gains one row per new token. A tokenizer built afresh would order every id by today's corpus frequency,
 * so a trained model could not take it; appending keeps every old id, and so every old row, where it was.
 *
 * Invariants: on text the old tokenizer could already split (no new phrase in it), both tokenizers give the same ids,
 * and the model's logits on the old columns are the old ones exactly (the old rows are untouched; the new columns
 * are extra). A new token's row starts as the mean of the old rows of its text as the old tokenizer spelled it
 * (" using 9" -> [" using", " 9"]), so the model first reads it roughly as it read those tokens; an untied LM head
 * gets the same mean of its own rows. A value head (score.weight) reads hidden states and needs no change.
 */
import type { ModelConfig } from "./config.ts";
import { EMBED, LM_HEAD } from "./plan.ts";
import { Tokenizer } from "./tokenizer.ts";

/** A model with its tokenizer, as loaded from a model directory or a checkpoint. */
export interface VocabModel {
  config: ModelConfig;
  tensors: Map<string, Float32Array>;
  tokenizer: Tokenizer;
}

/** The extended model and the tokens it gained, in their new id order. */
export interface ExtendedModel extends VocabModel {
  added: string[];
}

/**
 * `model` with every vocabulary entry of `target` that its tokenizer lacks appended (ids from its vocabSize on, in
 * the target's id order), and the target's pre-tokenizer pattern, so the new phrases are split out of text. The
 * returned tensor map shares the arrays of every unchanged tensor. Refuses (RangeError) a target that lacks an old
 * entry, a tokenizer that is not WordLevel with a Split pre-tokenizer, other added tokens, and padding rows.
 *
 * @example
 * ```ts
 * const m = extendVocabulary(model, wordTokenizer(vocabulary.corpus, { phrases: vocabulary.phrases }));
 * console.log(`${m.added.length} tokens added, vocab ${m.config.vocabSize}`);
 * ```
 */
export function extendVocabulary(model: VocabModel, target: Tokenizer): ExtendedModel {
  const old = wordLevel(model.tokenizer, "the model's tokenizer");
  const want = wordLevel(target, "the target tokenizer");
  const missing = Object.keys(old.vocab).filter((t) => !(t in want.vocab));
  if (missing.length > 0) {
    throw new RangeError(
      `Extending a vocabulary: the target lacks ${missing.length} of the model's tokens (${quotedSample(missing)}); ` +
        "tokens can only be appended, never dropped",
    );
  }
  if (JSON.stringify(old.files.added_tokens ?? []) !== JSON.stringify(want.files.added_tokens ?? [])) {
    throw new RangeError("Extending a vocabulary: the target's added tokens differ from the model's");
  }
  const V = model.tokenizer.vocabSize, C = model.config.hiddenSize;
  if (model.config.vocabSize !== V) {
    throw new RangeError(
      `Extending a vocabulary: the model has ${model.config.vocabSize} embedding rows for ${V} token ids; ` +
        "appending after padding rows is not supported",
    );
  }
  const added = Object.entries(want.vocab).filter(([t]) => !(t in old.vocab)).sort((a, b) => a[1] - b[1])
    .map(([t]) => t);
  if (added.length === 0) return { ...model, added: [] };

  const vocab = { ...old.vocab };
  added.forEach((t, i) => vocab[t] = V + i);
  const files = structuredClone(old.files);
  files.model = { ...old.files.model as object, vocab };
  files.pre_tokenizer = { ...old.files.pre_tokenizer as object, pattern: { Regex: want.pattern } };
  const tokenizer = Tokenizer.fromJson(files, structuredClone(model.tokenizer.files.config));
  // Each new token's text as the old tokenizer reads it: [UNK] for a word it never had.
  const spelled = added.map((t) => model.tokenizer.encode(t));
  const grown = (name: string): Float32Array => {
    const w = model.tensors.get(name);
    if (!w) throw new RangeError(`Extending a vocabulary: the model has no ${name}`);
    if (w.length !== V * C) {
      throw new RangeError(`Extending a vocabulary: ${name} has ${w.length} values, not ${V}x${C}`);
    }
    const out = new Float32Array((V + added.length) * C);
    out.set(w);
    spelled.forEach((ids, i) => {
      const row = new Float64Array(C);
      for (const id of ids) for (let c = 0; c < C; c++) row[c] += w[id * C + c];
      for (let c = 0; c < C; c++) out[(V + i) * C + c] = row[c] / ids.length;
    });
    return out;
  };
  const tensors = new Map(model.tensors);
  tensors.set(EMBED, grown(EMBED));
  if (!model.config.tieWordEmbeddings && !model.config.valueHead) tensors.set(LM_HEAD, grown(LM_HEAD));
  return { config: { ...model.config, vocabSize: V + added.length }, tensors, tokenizer, added };
}

/** A word-level tokenizer's parts: its files, vocab and Split pattern; a RangeError for any other kind. */
function wordLevel(t: Tokenizer, what: string) {
  const files = t.files.tokenizer;
  const model = files.model as { type?: unknown; vocab?: unknown };
  const pre = files.pre_tokenizer as { type?: unknown; pattern?: { Regex?: unknown } } | null | undefined;
  if (model?.type !== "WordLevel" || typeof model.vocab !== "object" || model.vocab === null) {
    throw new RangeError(`Extending a vocabulary: ${what} is ${String(model?.type)}, not WordLevel`);
  }
  if (pre?.type !== "Split" || typeof pre.pattern?.Regex !== "string") {
    throw new RangeError(`Extending a vocabulary: ${what} has no Split pre-tokenizer with a regex`);
  }
  return { files, vocab: model.vocab as Record<string, number>, pattern: pre.pattern.Regex };
}

/** The first `n` tokens of a list, quoted, and "..." when there are more: for a message. */
export function quotedSample(tokens: readonly string[], n = 5): string {
  const shown = tokens.slice(0, n).map((t) => JSON.stringify(t)).join(", ");
  return tokens.length > n ? `${shown}, ...` : shown;
}
