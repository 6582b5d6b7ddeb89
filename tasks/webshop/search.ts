/**
 * WebShop's search engine: pyserini's `LuceneSearcher` over one document per product (search_engine/
 * convert_product_file_format.py: title, description, first bullet point and the option text
 * `name: v1, v2, and name: ...`, lower-cased), answering the top 50 by BM25 with pyserini's defaults. Rebuilt here
 * from what Lucene does, not Lucene itself:
 *
 * - analysis as Anserini's DefaultEnglishAnalyzer: Unicode word segmentation (Lucene's StandardTokenizer follows
 *   UAX #29; here `Intl.Segmenter`'s word-like segments, ICU's UAX #29, mended where ICU's rules differ from Lucene's:
 *   letters joined across `.` and `:`, ideographs and hiragana one token each, emoji kept), possessive `'s` removed,
 *   lower-cased, Lucene's 33 English stop words dropped, Porter stemming (npm `stemmer`, Porter's reference
 *   algorithm);
 * - Lucene 8's BM25 (pyserini 0.17, AgentGym's pin): per query token (repeats count again), idf =
 *   ln(1 + (N - n + 0.5) / (n + 0.5)), times tf / (tf + k1 (1 - b + b dl / avgdl)) with k1 = 0.9, b = 0.4, in
 *   float32 as Lucene computes it; dl is the document's token count after Lucene's one-byte norm encoding (exact
 *   below 24, four significant bits above), avgdl the exact mean;
 * - ties by asin, as Anserini breaks them.
 *
 * Where ranking can differ from Lucene's (measured against Lucene 8 itself: tests/tasks/webshop/lucene_test.ts,
 * docs/webshop.md): segmentation rules of scripts beyond those mended above (Thai, Lao, Khmer, Myanmar), tokens over
 * 255 characters; Porter's reference stemmer and Lucene's port on rare words; the last bits of float sums.
 *
 * @example
 * ```ts
 * const engine = new SearchEngine([{ id: "B000000001", text: "red running shoes" }]);
 * engine.search("running shoe"); // [{ id: "B000000001", score: ... }]
 * ```
 */
import { stemmer } from "stemmer";

/** Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  ("a an and are as at be but by for if in into is it no not of on or such that the their then there these they " +
    "this to was will with").split(" "),
);

const SEGMENTER = new Intl.Segmenter("en", { granularity: "word" });
// UAX #29's MidLetter and MidNumLet characters, which join two letters into one word (WB6, WB7): ICU's rules in V8 break
// at them ("u.s.a", "a:b"), Lucene's StandardTokenizer does not.
const MID_LETTER = /^[.:\u00b7\u0387\u055f\u05f4\u2024\u2027\ufe13\ufe52\ufe55\uff0e\uff1a]$/;
// Lucene emits each Han ideograph and hiragana character as a token of its own (ICU segments by dictionary).
const SINGLE_CHARS = /[\p{Script=Han}\p{Script=Hiragana}]/u;
const EMOJI = /^\p{Extended_Pictographic}/u;
const letterAt = (s: string, at: number) => /\p{L}/u.test([...s].at(at) ?? "");

/** The tokens of `text` as Lucene's StandardTokenizer cuts them (UAX #29 word-like segments). */
export function tokenize(text: string): string[] {
  const segments = [...SEGMENTER.segment(text)];
  const out: string[] = [];
  let joinNext = false;
  segments.forEach((s, i) => {
    const next = segments[i + 1];
    if (s.isWordLike) {
      if (joinNext) out[out.length - 1] += s.segment;
      else out.push(...(SINGLE_CHARS.test(s.segment) ? splitIdeographs(s.segment) : [s.segment]));
      joinNext = false;
    } else if (
      MID_LETTER.test(s.segment) && out.length > 0 && segments[i - 1]?.isWordLike && next?.isWordLike &&
      letterAt(out[out.length - 1], -1) && letterAt(next.segment, 0)
    ) {
      out[out.length - 1] += s.segment;
      joinNext = true;
    } else if (EMOJI.test(s.segment)) out.push(s.segment);
  });
  return out;
}

/** A segment holding ideographs or hiragana as Lucene cuts it: each such character alone, other runs whole. */
function splitIdeographs(segment: string): string[] {
  const out: string[] = [];
  let run = "";
  for (const ch of segment) {
    if (SINGLE_CHARS.test(ch)) {
      if (run) out.push(run);
      out.push(ch);
      run = "";
    } else run += ch;
  }
  if (run) out.push(run);
  return out;
}

/** The terms of `text` as the analyzer indexes and queries them. */
export function analyze(text: string): string[] {
  const terms: string[] = [];
  for (const token of tokenize(text)) {
    const word = token.replace(/['\u2019\uff07][sS]$/, "").toLowerCase();
    if (word === "" || STOP_WORDS.has(word)) continue;
    terms.push(stemmer(word));
  }
  return terms;
}

/** Lucene's `SmallFloat.intToByte4` then `byte4ToInt`: a length as the one-byte norm keeps it. */
export function encodedLength(n: number): number {
  const FREE = 24; // 255 - longToInt4(Integer.MAX_VALUE)
  if (n < FREE) return n;
  const v = n - FREE;
  const bits = 32 - Math.clz32(v);
  if (bits < 4) return n;
  const shift = bits - 4;
  return FREE + (((v >>> shift) & 0x07 | 0x08) << shift);
}

/** One indexed document. */
export interface SearchDoc {
  id: string;
  text: string;
}

/** A hit. */
export interface Hit {
  id: string;
  score: number;
}

const K1 = Math.fround(0.9), B = Math.fround(0.4);

/** An in-memory inverted index with Lucene 8's BM25. */
export class SearchEngine {
  readonly #ids: string[];
  readonly #lengths: Float32Array;
  readonly #postings = new Map<string, { doc: number; tf: number }[]>();
  readonly #avgdl: number;

  /** Indexes `docs` (their order is Lucene's doc id order; ties are broken by `id`). */
  constructor(docs: readonly SearchDoc[]) {
    this.#ids = docs.map((d) => d.id);
    this.#lengths = new Float32Array(docs.length);
    let total = 0;
    docs.forEach((d, doc) => {
      const terms = analyze(d.text);
      total += terms.length;
      this.#lengths[doc] = encodedLength(terms.length);
      const tf = new Map<string, number>();
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, n] of tf) {
        if (!this.#postings.has(t)) this.#postings.set(t, []);
        this.#postings.get(t)!.push({ doc, tf: n });
      }
    });
    this.#avgdl = Math.fround(docs.length === 0 ? 0 : total / docs.length);
  }

  /** How many documents hold `term` (an analyzed term). */
  docFreq(term: string): number {
    return this.#postings.get(term)?.length ?? 0;
  }

  /** The `k` best documents for `query`, best first; none when no query term is indexed. */
  search(query: string, k = 50): Hit[] {
    const f = Math.fround, n = this.#ids.length;
    const scores = new Map<number, number>();
    for (const term of analyze(query)) {
      const postings = this.#postings.get(term);
      if (!postings) continue;
      const df = postings.length;
      const weight = f(Math.log(1 + (n - df + 0.5) / (df + 0.5)));
      for (const { doc, tf } of postings) {
        const norm = f(K1 * f(f(1 - B) + f(f(B * this.#lengths[doc]) / this.#avgdl)));
        scores.set(doc, (scores.get(doc) ?? 0) + f(weight * f(tf / (tf + norm))));
      }
    }
    return [...scores].map(([doc, s]) => ({ id: this.#ids[doc], score: f(s) }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, k);
  }
}
