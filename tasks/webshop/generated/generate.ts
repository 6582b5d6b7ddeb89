/**
 * Crucible's generated WebShop catalogue, so that WebShop runs with no download: products in WebShop's published
 * schema (items_shuffle: name, description, bullet points, price string, category path, query, option groups with
 * capitalised values) and its attribute file (items_ins_v2: attributes, and for three products in four a synthetic
 * instruction in WebShop's words, "Find me high waist, tummy control yoga pants with machine wash"), over the kinds of
 * kinds.ts, drawn from one seed. Each instruction's attributes are chosen so that no other product of its kind has all
 * of them, so a goal names one product. The files go through WebShop's own loader and goal builder (catalog.ts,
 * goals.ts), as real files do.
 *
 * Held out: a fifth of the products with instructions, drawn from the seed; every goal of a held-out product is a
 * test goal, every other goal a train goal, so the splits share no goal and no target product (the catalogue, which
 * search reaches, is shared, as WebShop's is).
 */
import { PyRandom } from "../../../src/util/py_random.ts";
import type { RawAttributes, RawProduct } from "../catalog.ts";
import { BRANDS, KINDS, type ProductKind, TITLE_WORDS } from "./kinds.ts";

/** A generated catalogue: WebShop's two files, and the asins whose goals are held out. */
export interface GeneratedFiles {
  products: RawProduct[];
  attributes: Record<string, RawAttributes>;
  testAsins: Set<string>;
}

/** The shipped catalogue's sizes (its seed is data.ts's). */
export const GENERATED_SIZES = { perKind: 8, instructed: 0.75, heldOut: 0.2 } as const;

/** Sizes of a generated catalogue. */
export interface GenerateOptions {
  seed?: number;
  /** Products of each kind. Default 8. */
  perKind?: number;
  /** Share of products with an instruction. Default 0.75. */
  instructed?: number;
  /** Share of the instructed products held out. Default 0.2. */
  heldOut?: number;
}

/**
 * The asins generated products draw from: "B0" and eight letters, so an asin is three word-level tokens ("B", "0",
 * "XKQMRTZA"), one of them a letter run a small model copies whole (digits would split it into eight). Every world
 * draws from this one pool, so the tiny model's vocabulary holds every asin any world can show, while which product
 * an asin names changes from world to world.
 */
export const ASIN_POOL: readonly string[] = (() => {
  const rng = new PyRandom(20221102);
  const codes = new Set<string>();
  while (codes.size < 600) {
    codes.add("B0" + Array.from({ length: 8 }, () => "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[rng.randbelow(26)]).join(""));
  }
  return [...codes];
})();
const PHRASES = [
  "made to last",
  "for everyday use",
  "easy to care for",
  "a customer favorite",
  "great as a gift",
  "tested for quality",
];

const titleCase = (s: string) => s.replace(/(^|\s)([a-z])/g, (_, a: string, b: string) => a + b.toUpperCase());

/** WebShop's files for a generated catalogue (deterministic in the options). */
export function generateFiles(options: GenerateOptions = {}): GeneratedFiles {
  const rng = new PyRandom(options.seed ?? 0);
  const perKind = options.perKind ?? 8;
  const products: RawProduct[] = [];
  const attributes: Record<string, RawAttributes> = {};
  const instructed: string[] = [];
  if (KINDS.length * perKind > ASIN_POOL.length) {
    throw new RangeError(`A generated catalogue holds at most ${ASIN_POOL.length} products, asked ${perKind} a kind`);
  }
  const asins = rng.sample(ASIN_POOL, KINDS.length * perKind);
  for (const kind of KINDS) {
    const brands = rng.sample(BRANDS, Math.min(perKind, BRANDS.length));
    const drawn: string[][] = [];
    for (let i = 0; i < perKind; i++) {
      const asin = asins[products.length];
      drawn.push(rng.sample(kind.attributes, 3 + rng.randbelow(3)));
      products.push(product(kind, asin, brands[i % brands.length], drawn[i], rng));
      attributes[asin] = { attributes: drawn[i] };
    }
    // Instructions come after the kind's products are drawn, so each can be checked against all of its kind.
    products.slice(-perKind).forEach((p, i) => {
      if (rng.random() >= (options.instructed ?? 0.75)) return;
      const named = distinctive(drawn[i], drawn.filter((_, j) => j !== i), rng);
      attributes[p.asin] = { ...attributes[p.asin], ...instruction(kind, named, rng) };
      instructed.push(p.asin);
    });
  }
  const held = rng.sample(instructed, Math.round(instructed.length * (options.heldOut ?? 0.2)));
  return { products, attributes, testAsins: new Set(held) };
}

function product(kind: ProductKind, asin: string, brand: string, attrs: string[], rng: PyRandom): RawProduct {
  const word = rng.choice(TITLE_WORDS[kind.category]);
  const shown = attrs.slice(0, 2).map(titleCase).join(", ");
  const [lo, hi] = kind.price;
  const price = Math.floor(lo + (hi - lo) * rng.random()) + 0.99;
  const ranged = rng.random() < 0.15;
  const pricing = ranged
    ? `$${price.toFixed(2)} - $${(price + 2 + rng.randbelow(8)).toFixed(2)}`
    : `$${price.toFixed(2)}`;
  const options: NonNullable<RawProduct["customization_options"]> = {};
  for (const [name, values] of kind.options) {
    if (kind.options.length > 1 && rng.random() < 0.2) continue;
    const chosen = rng.sample(values, Math.min(values.length, 2 + rng.randbelow(2)));
    options[titleCase(name)] = chosen.map((v) => ({ value: titleCase(v), image: null }));
  }
  return {
    asin,
    name: `${brand} ${word} ${kind.title} - ${shown}`,
    full_description: `This ${kind.title.toLowerCase()} from ${brand} is ${rng.choice(PHRASES)}. It comes with ` +
      `${attrs.slice(0, -1).join(", ")} and ${attrs[attrs.length - 1]}.`,
    small_description: attrs.map((a) => `${titleCase(a)}: ${rng.choice(PHRASES)}`),
    pricing,
    images: [],
    product_category: kind.path,
    query: kind.query,
    category: kind.category,
    customization_options: options,
  };
}

/** 2-3 of `attrs` that no other attribute set of the kind holds all of (all of `attrs` when none such is found). */
function distinctive(attrs: string[], others: string[][], rng: PyRandom): string[] {
  for (let tries = 0; tries < 20; tries++) {
    const pick = rng.sample(attrs, Math.min(attrs.length, 2 + rng.randbelow(2)));
    if (!others.some((o) => pick.every((a) => o.includes(a)))) return pick;
  }
  return attrs;
}

/** WebShop's synthetic instruction: some attributes before the kind's plural noun, the rest after "with". */
function instruction(kind: ProductKind, named: string[], rng: PyRandom): RawAttributes {
  const before = rng.randbelow(named.length);
  const pre = named.slice(0, before).join(", ");
  return {
    instruction: `Find me ${pre ? `${pre} ` : ""}${kind.plural} with ${named.slice(before).join(", ")}`,
    instruction_attributes: named,
  };
}
