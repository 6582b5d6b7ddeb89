/**
 * WebShop's pages as its text mode reads them (web_agent_text_env.py `observation_mode="text"`, the simple form
 * AgentGym serves): the text nodes BeautifulSoup finds in the page a template renders (web_agent_site/templates/),
 * in document order, each stripped, joined by ` [SEP] `, skipping the nodes that are a bare newline; and the
 * clickables `get_available_actions` lists: the text of every `.btn` button and `.product-link` asin (lower-cased),
 * then every option radio's value, keyed as a Python dict (a repeated key keeps its first place and its last target).
 *
 * Node by node, the templates give (`{x}` a value; ASCII-whitespace nodes become "\n" or " " as BeautifulSoup makes
 * them, python.ts `bs4Text`):
 * - search page: `WebShop`, `Instruction: `, `{instruction}`, the button `Search`;
 * - results: `Instruction:`, `{instruction}`, `Back to Search`, `Page {p} (Total results: {n})`, `< Prev` (past
 *   page 1), `Next >`, then per product `{asin}` (a link), `{title}`, `{price}`;
 * - item: `Instruction:`, `{instruction}`, `Back to Search`, `< Prev`, per option group `{name}` then its values,
 *   `{title}`, `Price: {price}`, `Rating: N.A.`, `Description`, `Features`, `Reviews`, `Buy Now`;
 * - sub-pages: `Instruction:`, `{instruction}`, `Back to Search`, `< Prev`, then the description, ` {bullet}` per
 *   feature, or nothing (reviews: upstream loads none);
 * - done: the thank-you page with its hidden record (asin, chosen options as Flask's `tojson`, unset fields as
 *   `None`) and `Your score (min 0.0, max 1.0)`, `{reward}`.
 */
import type { Product } from "./catalog.ts";
import { bs4Text, flaskToJson, floatRepr, pyStrip } from "./python.ts";

/** What a click on a clickable is: a button, a product link, or an option radio of a named group. */
export type Clickable = { kind: "button" } | { kind: "link" } | { kind: "option"; name: string };

/** The page kinds, as upstream's `get_page_name` tells them apart. */
export type PageKind = "index" | "search_results" | "item_page" | "item_sub_page" | "done";

/** A rendered page: its text nodes (as BeautifulSoup keeps them, before stripping) and its clickables. */
export interface Page {
  kind: PageKind;
  nodes: string[];
  clickables: Map<string, Clickable>;
  hasSearchBar: boolean;
}

/** The sub-pages an item page links to, by button text. */
export const SUB_PAGES = ["Description", "Features", "Reviews"] as const;

/** The text observation of a page. */
export function observationOf(page: Page): string {
  return page.nodes.filter((t) => t !== "\n").map(pyStrip).join(" [SEP] ");
}

class Builder {
  readonly nodes: string[] = [];
  readonly clickables = new Map<string, Clickable>();

  /** A text node whose raw text is `raw` (template text and value together). */
  text(raw: string, inPre = false): this {
    if (raw !== "") this.nodes.push(bs4Text(raw, inPre));
    return this;
  }

  button(label: string): this {
    this.text(label);
    return this.click(label.toLowerCase(), { kind: "button" });
  }

  click(key: string, target: Clickable): this {
    this.clickables.set(key, target);
    return this;
  }

  page(kind: PageKind, hasSearchBar = false): Page {
    return { kind, nodes: this.nodes, clickables: this.clickables, hasSearchBar };
  }
}

function header(instruction: string): Builder {
  return new Builder().text("Instruction:").text(instruction).button("Back to Search");
}

/** The start page (search_page.html). */
export function searchPage(instruction: string): Page {
  return new Builder().text("WebShop").text("Instruction: ").text(instruction).button("Search").page("index", true);
}

/** A results page (results_page.html): page `page` of `total` results, showing `products`. */
export function resultsPage(instruction: string, products: readonly Product[], page: number, total: number): Page {
  const b = header(instruction).text(`Page ${page} (Total results: ${total})`);
  if (page > 1) b.button("< Prev");
  b.button("Next >");
  // Links come after the buttons in the clickables (upstream lists find_all('.btn') first), so they are added after.
  for (const p of products) b.text(p.asin).text(p.title).text(p.priceTag);
  for (const p of products) b.click(p.asin.toLowerCase(), { kind: "link" });
  return b.page("search_results");
}

/** An item page (item_page.html) of `product`. */
export function itemPage(instruction: string, product: Product): Page {
  const b = header(instruction).button("< Prev");
  for (const [name, values] of product.options) {
    b.text(name);
    for (const v of values) b.text(v);
  }
  b.text(product.title).text(`Price: ${product.priceTag}`).text("Rating: N.A.");
  for (const sub of SUB_PAGES) b.button(sub);
  b.button("Buy Now");
  for (const [name, values] of product.options) for (const v of values) b.click(v, { kind: "option", name });
  return b.page("item_page");
}

/** A sub-page (description_page.html, features_page.html, review_page.html) of `product`. */
export function subPage(instruction: string, product: Product, sub: (typeof SUB_PAGES)[number]): Page {
  const b = header(instruction).button("< Prev");
  if (sub === "Description") b.text(product.description);
  if (sub === "Features") { for (const bullet of product.bulletPoints) b.text(` ${bullet}`); }
  return b.page("item_sub_page");
}

/** The done page (done_page.html) after buying `asin` with `options` for `reward`. */
export function donePage(asin: string, options: ReadonlyMap<string, string>, reward: number): Page {
  const b = new Builder().text("Thank you for shopping with us!").text("Your code: ").text("None", true)
    .text(" (Paste it in your MTurk interface.)").text("Purchased").text("asin").text(asin, true)
    .text("options").text(flaskToJson(options), true);
  for (const field of ["attrs", "category", "query", "product category"]) b.text(field).text("None", true);
  b.text("Target");
  // The template reads goal.* of a goal it is never given: each renders empty, so only the labels remain.
  for (const field of ["asin", "options", "attrs", "price upper", "instuction text", "category", "product category"]) {
    b.text(field);
  }
  b.text("query").text("Goal ").text("None", true).text("Reward").text("Your score (min 0.0, max 1.0)")
    .text(floatRepr(reward), true).text("Reward Details ").text("None", true);
  return b.page("done");
}
