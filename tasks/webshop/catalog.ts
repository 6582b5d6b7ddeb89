/**
 * WebShop's products as its engine loads them (web_agent_site/engine/engine.py `load_products` and
 * `generate_product_prices`), from the published files' layout: the product file (items_shuffle_1000.json or the
 * full items_shuffle.json, a list of scraped products), the attribute file (items_ins_v2*.json: per asin its
 * attributes and, for some, a synthetic instruction) and the human instructions (items_human_ins.json: per asin a
 * list of instructions). What the loader does, in order: the first `numProducts` raw products are kept, products whose
 * asin is "nan" or longer than 10 characters and repeated asins are skipped; the price string `$a - $b` becomes
 * `[a, b]` and the tag `$a to $b` (Python float text: `$12.0`); option names and values are lower-cased, values
 * stripped and `/` written ` | `; attributes come from the attribute file, else `["DUMMY_ATTR"]`; reviews are empty
 * and the rating `N.A.` (upstream's loader has review loading commented out). A product with a price range is sold at
 * a price drawn uniformly in it, from a generator of this module's seed (upstream draws from Python's unseeded global
 * generator, so a range's price differs between its server runs).
 */
import { PyRandom } from "../../src/util/py_random.ts";
import { floatRepr, pyStrip } from "./python.ts";

/** A product as WebShop's product file writes it (the fields the loader reads). */
export interface RawProduct {
  asin: string;
  name: string;
  full_description: string;
  small_description: string | string[];
  /** `$12.99`, `$10.99 - $15.99`, or absent / empty for $100. */
  pricing?: string | null;
  images?: string[];
  product_category: string;
  query: string;
  category: string;
  customization_options?: Record<string, { value: string; image?: string | null }[] | null> | null;
}

/** The attribute file's record of one asin. */
export interface RawAttributes {
  attributes?: string[];
  instruction?: string | null;
  instruction_attributes?: string[] | null;
}

/** One human instruction of items_human_ins.json. */
export interface RawHumanInstruction {
  instruction: string;
  instruction_attributes: string[];
  instruction_options: string[];
}

/** A product as the engine holds it. */
export interface Product {
  asin: string;
  name: string;
  /** Lower-cased and stripped, as the loader leaves it. */
  query: string;
  category: string;
  productCategory: string;
  title: string;
  description: string;
  bulletPoints: string[];
  /** One price, or the two ends of a range. */
  pricing: number[];
  /** `$12.99` or `$10.99 to $15.99`. */
  priceTag: string;
  /** Option values by (lower-cased) option name, in file order. */
  options: Map<string, string[]>;
  attributes: string[];
  mainImage: string;
  /** The attribute file's synthetic instruction (synthetic goals), where it has one. */
  instructionText?: string | null;
  instructionAttributes?: string[] | null;
  /** The product's human instructions (human goals), where the file has some. */
  instructions?: RawHumanInstruction[];
}

/** The loaded catalogue: products in file order, by asin, and the price each sells at. */
export interface Catalog {
  products: Product[];
  byAsin: Map<string, Product>;
  prices: Map<string, number>;
  /** Asins by attribute (the `<a>` search keyword). */
  attributeToAsins: Map<string, Set<string>>;
}

/** What to load. */
export interface LoadOptions {
  /** Keep the first N raw products (AgentGym's server: 1000). Default all. */
  numProducts?: number;
  /** Human goals: attach items_human_ins.json's instructions; else the attribute file's synthetic ones. */
  human?: Readonly<Record<string, RawHumanInstruction[]>>;
  /** Seed of the draws that price ranged products. Default 0. */
  priceSeed?: number;
}

/** The price strings of a `pricing` field as floats (`re.sub(r'[^\d.]', '', p)` of each `$` piece). */
export function parsePricing(pricing: string | null | undefined, asin: string): number[] {
  if (!pricing) return [100];
  return pricing.split("$").slice(1).map((piece) => {
    const text = piece.replace(/[^0-9.]/g, "");
    if (!/^(\d+\.?\d*|\.\d+)$/.test(text)) {
      throw new SyntaxError(`Product ${asin}: the price "${pricing}" has a piece "${piece}" that is not a number`);
    }
    return Number(text);
  });
}

/** `load_products` over parsed files. Throws SyntaxError naming the asin and field of a malformed product. */
export function loadCatalog(
  raw: readonly RawProduct[],
  attributes: Readonly<Record<string, RawAttributes>>,
  options: LoadOptions = {},
): Catalog {
  const seen = new Set<string>();
  const products: Product[] = [];
  for (const p of raw.slice(0, options.numProducts ?? raw.length)) {
    if (typeof p?.asin !== "string") throw new SyntaxError(`A product has no string asin: ${JSON.stringify(p)}`);
    if (p.asin === "nan" || p.asin.length > 10 || seen.has(p.asin)) continue;
    seen.add(p.asin);
    products.push(loadProduct(p, attributes[p.asin], options.human));
  }
  const attributeToAsins = new Map<string, Set<string>>();
  for (const p of products) {
    for (const a of p.attributes) {
      if (!attributeToAsins.has(a)) attributeToAsins.set(a, new Set());
      attributeToAsins.get(a)!.add(p.asin);
    }
  }
  return {
    products,
    byAsin: new Map(products.map((p) => [p.asin, p])),
    prices: productPrices(products, options.priceSeed ?? 0),
    attributeToAsins,
  };
}

function loadProduct(
  p: RawProduct,
  attrs: RawAttributes | undefined,
  human: LoadOptions["human"],
): Product {
  for (const field of ["name", "full_description", "product_category", "query", "category"] as const) {
    if (typeof p[field] !== "string") throw new SyntaxError(`Product ${p.asin}: "${field}" must be a string`);
  }
  let pricing = parsePricing(p.pricing, p.asin);
  // A price field without a "$" gives no piece, where upstream's tag line raises; read as a missing price.
  if (pricing.length === 0) pricing = [100];
  const priceTag = pricing.length === 1
    ? `$${floatRepr(pricing[0])}`
    : `$${floatRepr(pricing[0])} to $${floatRepr(pricing[1])}`;
  const options = new Map<string, string[]>();
  for (const [name, contents] of Object.entries(p.customization_options ?? {})) {
    if (contents === null) continue;
    if (!Array.isArray(contents)) throw new SyntaxError(`Product ${p.asin}: option "${name}" is not a list`);
    options.set(name.toLowerCase(), contents.map((c) => pyStrip(String(c.value)).replaceAll("/", " | ").toLowerCase()));
  }
  const product: Product = {
    asin: p.asin,
    name: p.name,
    query: pyStrip(p.query.toLowerCase()),
    category: p.category,
    productCategory: p.product_category,
    title: p.name,
    description: p.full_description,
    bulletPoints: Array.isArray(p.small_description) ? p.small_description : [p.small_description],
    pricing: pricing.slice(0, 2),
    priceTag,
    options,
    attributes: attrs?.attributes ?? ["DUMMY_ATTR"],
    mainImage: p.images?.[0] ?? "",
  };
  if (human) {
    if (Object.hasOwn(human, p.asin)) product.instructions = human[p.asin];
  } else {
    product.instructionText = attrs?.instruction ?? null;
    product.instructionAttributes = attrs?.instruction_attributes ?? null;
  }
  return product;
}

/** `generate_product_prices`: one price, or a uniform draw in a range (CPython's `uniform`, seeded). */
export function productPrices(products: readonly Product[], seed: number): Map<string, number> {
  const rng = new PyRandom(seed);
  return new Map(
    products.map((p) => [p.asin, p.pricing.length === 1 ? p.pricing[0] : rng.uniform(p.pricing[0], p.pricing[1])]),
  );
}
