/**
 * The nouns of a product name, as WebShop's type reward takes them: the lower-cased text of every token whose
 * Universal POS tag is NOUN or PROPN (goal.py also names `PNOUN`, a tag spaCy never gives). Upstream tags with spaCy's
 * `en_core_web_lg`; Crucible with wink-nlp's English lite model, which gives the same Universal tag set. The taggers
 * differ in places (wink splits "4K" into "4" and "K"; title-case words lean to PROPN in both, which the reward counts
 * alike); docs/webshop.md gives the agreement measured on goal.py's own test cases. Names repeat across goals and
 * pages, so tags are cached per name (bounded). Both packages load with this module, by the specifiers of
 * packages.ts (held in variables, so that only a command that plays WebShop fetches them).
 */
import { WEBSHOP_PACKAGES } from "./packages.ts";

const p: Record<keyof typeof WEBSHOP_PACKAGES, string> = WEBSHOP_PACKAGES;
const [{ default: winkNLP }, { default: model }]: [
  typeof import("npm:wink-nlp@2.4.0"),
  typeof import("npm:wink-eng-lite-web-model@1.8.1"),
] = await Promise.all([import(p.wink), import(p.winkModel)]);
const nlp = winkNLP(model, ["pos"]);
const its = nlp.its;
const cache = new Map<string, readonly string[]>();
const CACHE_LIMIT = 100_000;

/** The lower-cased noun and proper-noun tokens of `text`, in order (duplicates kept). */
export function nounTokens(text: string): readonly string[] {
  const hit = cache.get(text);
  if (hit) return hit;
  const tokens = nlp.readDoc(text).tokens();
  const words = tokens.out() as string[], tags = tokens.out(its.pos) as string[];
  const nouns = words.filter((_, i) => tags[i] === "NOUN" || tags[i] === "PROPN").map((w) => w.toLowerCase());
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, nouns);
  return nouns;
}
