/**
 * What every WebShop session of one server shares, read-only: the catalogue, the goals in AgentGym's order and the
 * search index (one document per product, as search_engine/convert_product_file_format.py writes it), and upstream's
 * `get_top_n_product_from_keywords` over them.
 */
import type { Catalog, Product } from "./catalog.ts";
import { buildGoals, type Goal, type GoalKind } from "./goals.ts";
import { SearchEngine } from "./search.ts";

/** A catalogue, its goals and its search engine. */
export interface WebShopWorld {
  catalog: Catalog;
  goals: Goal[];
  engine: SearchEngine;
  /** Which goals these are. */
  goalKind: GoalKind;
  /** The products a search for `keywords` (the action's words, split on spaces) lists, best first. */
  find(keywords: readonly string[], random: () => number, n: number): Product[];
}

/** The indexed text of a product: title, description, first bullet point and options, lower-cased. */
export function documentText(p: Product): string {
  const options = [...p.options].map(([name, values]) => `${name}: ${values.join(", ")}`).join(", and ");
  return [p.title, p.description, p.bulletPoints[0] ?? "", options].join(" ").toLowerCase();
}

/** Builds the world of `catalog` with goals of `kind`. */
export function buildWorld(catalog: Catalog, kind: GoalKind): WebShopWorld {
  const engine = new SearchEngine(catalog.products.map((p) => ({ id: p.asin, text: documentText(p) })));
  const goals = buildGoals(catalog, kind);
  return {
    catalog,
    goals,
    engine,
    goalKind: kind,
    find(keywords, random, n) {
      const all = catalog.products;
      const rest = keywords.slice(1).join(" ").trim();
      switch (keywords[0]) {
        case "<r>":
          return sampleOf(all, Math.min(n, all.length), random);
        case "<a>": {
          const asins = catalog.attributeToAsins.get(rest) ?? new Set();
          return all.filter((p) => asins.has(p.asin));
        }
        case "<c>": {
          const category = (keywords[1] ?? "").trim();
          return all.filter((p) => p.category === category);
        }
        case "<q>":
          return all.filter((p) => p.query === rest);
        default:
          return engine.search(keywords.join(" "), n).map((h) => catalog.byAsin.get(h.id)!);
      }
    },
  };
}

/** `k` distinct items drawn at random, in draw order. */
function sampleOf<T>(items: readonly T[], k: number, random: () => number): T[] {
  const pool = [...items];
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, k);
}
