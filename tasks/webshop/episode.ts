/**
 * One WebShop session as web_agent_text_env.py plays it (`WebAgentTextEnv.step` over `SimServer.receive`): an action
 * is parsed with `^(.+)\[(.+)\]` (at the start, a line at most), its argument lower-cased; `search[...]` with a
 * non-empty argument searches from any page; `click[x]` acts when `x` is one of the page's clickables other than
 * `search`; anything else changes nothing and answers the same page with reward 0. `Buy Now` scores the purchase
 * (reward.ts) and shows the done page with `done` true; the session can go on after it, as upstream's can.
 *
 * Which page a click came from is read off the page's URL, as upstream's `get_page_name` reads it (the first of
 * `search_results`, `item_page`, `item_sub_page`, `done` the URL holds), URLs built as upstream builds them, keywords
 * and options included, so the rare search whose words hold a page name behaves as it does there.
 *
 * Search keywords as upstream's special forms: `<r>` 50 random products, `<c> cat` the products of a category,
 * `<q> words` those of a query, `<a> words` those with an attribute (upstream's text environment raises on `<a>`, its
 * site answers it so; Crucible answers it). Results past 50 exist only for these forms.
 */
import type { Product } from "./catalog.ts";
import type { Goal } from "./goals.ts";
import {
  type Clickable,
  donePage,
  itemPage,
  observationOf,
  type Page,
  type PageKind,
  resultsPage,
  searchPage,
  SUB_PAGES,
  subPage,
} from "./pages.ts";
import { dictRepr, jsonDumps } from "./python.ts";
import { type RewardInfo, webshopReward } from "./reward.ts";
import type { WebShopWorld } from "./world.ts";

const BASE_URL = "http://127.0.0.1:3000";
const SEARCH_RETURN_N = 50;
const PRODUCT_WINDOW = 10;

/** One step's outcome. */
export interface WebShopStep {
  observation: string;
  reward: number;
  done: boolean;
  /** The purchase's reward parts, on the step that bought. */
  info?: RewardInfo & { asin: string; options: Record<string, string> };
  /** Set when the action was not one the page offers: it changed nothing (the server's invalid-action penalty). */
  invalid?: true;
}

/** `parse_action`: the name and argument of `name[arg]`, or the whole text as a name without argument. */
export function parseAction(action: string): { name: string; arg: string | undefined } {
  const m = /^([^\n]+)\[([^\n]+)\]/.exec(action);
  return m ? { name: m[1], arg: m[2] } : { name: action, arg: undefined };
}

/** A session over a world's goals, products and search engine. */
export class WebShopSession {
  readonly #world: WebShopWorld;
  readonly #random: () => number;
  #goal!: Goal;
  #sessionId = "";
  #url: string | null = null;
  #page!: Page;
  #keywords: string[] = [];
  #pageNumber = 1;
  #asin: string | null = null;
  #options = new Map<string, string>();
  #bought = false;

  /** A session; `random` (default Math.random) draws the `<r>` search's products. */
  constructor(world: WebShopWorld, random: () => number = Math.random) {
    this.#world = world;
    this.#random = random;
  }

  /** The goal of the last reset. */
  get goal(): Goal {
    return this.#goal;
  }

  /** Whether a purchase was made since the last reset. */
  get bought(): boolean {
    return this.#bought;
  }

  /** Resets to goal `index` (taken mod the goal count) and answers the start page's text. */
  reset(index: number): string {
    const n = this.#world.goals.length;
    if (n === 0) throw new RangeError("This WebShop has no goals; its products have no instructions");
    this.#goal = this.#world.goals[((index % n) + n) % n];
    this.#sessionId = String(index);
    this.#index();
    this.#url = `${BASE_URL}/${this.#sessionId}`;
    this.#bought = false;
    return this.observation;
  }

  /** The current page's text. */
  get observation(): string {
    return observationOf(this.#page);
  }

  /** The current page's kind. */
  get pageKind(): PageKind {
    return this.#page.kind;
  }

  /** AgentGym's `/available_actions`: whether the page has a search bar, and its clickables. */
  availableActions(): { has_search_bar: boolean; clickables: string[] } {
    return { has_search_bar: this.#page.hasSearchBar, clickables: [...this.#page.clickables.keys()] };
  }

  /** `get_instruction_text`: the instruction heading's text, or undefined on the done page (which has none). */
  instructionText(): string | undefined {
    if (this.#page.kind === "done") return undefined;
    return `${this.#page.kind === "index" ? "Instruction: " : "Instruction:"}${this.#goal.instructionText}`;
  }

  /** The current URL, as upstream's simulated browser holds it. */
  get url(): string | null {
    return this.#url;
  }

  /** Applies one action. */
  step(action: string): WebShopStep {
    const { name, arg: raw } = parseAction(action);
    const arg = raw?.toLowerCase();
    if (name === "search" && arg !== undefined && arg !== "") return this.#search(arg.split(" "), 1);
    const target = arg === undefined || arg === "search" ? undefined : this.#page.clickables.get(arg);
    if (name === "click" && target) return this.#click(arg!, target);
    return { observation: this.observation, reward: 0, done: false, invalid: true };
  }

  #index(): void {
    this.#page = searchPage(this.#goal.instructionText);
    this.#keywords = [];
    this.#pageNumber = 1;
    this.#asin = null;
    this.#options = new Map();
  }

  #done(page: Page, url: string): WebShopStep {
    this.#page = page;
    this.#url = url;
    return { observation: this.observation, reward: 0, done: false };
  }

  #search(keywords: string[], page: number): WebShopStep {
    this.#keywords = keywords;
    this.#pageNumber = page;
    this.#asin = null;
    this.#options = new Map();
    const all = this.#world.find(keywords, this.#random, SEARCH_RETURN_N);
    const shown = all.slice((page - 1) * PRODUCT_WINDOW, page * PRODUCT_WINDOW);
    const url = `${BASE_URL}/search_results/${this.#sessionId}/${keywords.join("+")}/${page}`;
    return this.#done(resultsPage(this.#goal.instructionText, shown, page, all.length), url);
  }

  #pageName(): string {
    const url = this.#url ?? "";
    return ["search_results", "item_page", "item_sub_page", "done"].find((p) => url.includes(p)) ?? "";
  }

  #click(name: string, target: Clickable): WebShopStep {
    const from = this.#pageName();
    if (name === "buy now") return this.#buy();
    if (name === "back to search") {
      this.#index();
      return this.#done(this.#page, `${BASE_URL}/${this.#sessionId}`);
    }
    if (name === "next >" && from === "search_results") return this.#search(this.#keywords, this.#pageNumber + 1);
    if (name === "< prev" && from === "search_results") return this.#search(this.#keywords, this.#pageNumber - 1);
    if (name === "< prev" && from === "item_sub_page") return this.#item();
    if (name === "< prev" && from === "item_page") return this.#search(this.#keywords, this.#pageNumber);
    const sub = SUB_PAGES.find((s) => s.toLowerCase() === name);
    if (sub) {
      const url = `${BASE_URL}/item_sub_page/${this.#sessionId}/${this.#asin}/${this.#keywords.join("+")}/` +
        `${this.#pageNumber}/${sub}/${dictRepr(this.#options)}`;
      return this.#done(subPage(this.#goal.instructionText, this.#product(), sub), url);
    }
    if (target.kind === "link") this.#asin = name.toUpperCase();
    else if (target.kind === "option") this.#options.set(target.name, name);
    return this.#item();
  }

  #product(): Product {
    const p = this.#asin === null ? undefined : this.#world.catalog.byAsin.get(this.#asin);
    // Upstream raises (KeyError) here; no page's clickables lead here without a product.
    if (!p) throw new RangeError(`No product is open (asin ${this.#asin})`);
    return p;
  }

  #item(): WebShopStep {
    const url = `${BASE_URL}/item_page/${this.#sessionId}/${this.#asin}/${this.#keywords.join("+")}/` +
      `${this.#pageNumber}/${jsonDumps(this.#options)}`;
    return this.#done(itemPage(this.#goal.instructionText, this.#product()), url);
  }

  #buy(): WebShopStep {
    const product = this.#product();
    const price = this.#world.catalog.prices.get(product.asin)!;
    const info = webshopReward(product, this.#goal, { price, options: this.#options });
    this.#bought = true;
    this.#page = donePage(product.asin, this.#options, info.reward);
    this.#url = `${BASE_URL}/done/${this.#sessionId}/${product.asin}/${dictRepr(this.#options)}`;
    const options = Object.fromEntries(this.#options);
    return {
      observation: this.observation,
      reward: info.reward,
      done: true,
      info: { ...info, asin: product.asin, options },
    };
  }
}
