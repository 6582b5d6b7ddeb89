// WebShop's pages in text mode and its step rules, against expectations written by hand from upstream's templates
// (web_agent_site/templates/*.html, read as BeautifulSoup reads them) and web_agent_text_env.py: each page kind's text
// and clickables, navigation between them, the done page with its reward, and actions that change nothing.
import assert from "node:assert/strict";
import { parseAction, WebShopSession } from "../../../tasks/webshop/episode.ts";
import { fixtureWorld } from "./fixture.ts";

const world = fixtureWorld();
const INSTR = "Find me men's running shoes with rubber sole with color: navy blue, and size: 9, and price lower than " +
  "70.00 dollars";
const HEAD = `Instruction: [SEP] ${INSTR} [SEP] Back to Search`;
const RESULTS_1 = `${HEAD} [SEP] Page 1 (Total results: 3) [SEP] Next > [SEP] B00SHOE001 [SEP] Trail Runner Men's ` +
  "Running Shoes [SEP] $45.99 [SEP] B00SHOE002 [SEP] City Walker Casual Shoes [SEP] $60.0 [SEP] B00SOCK003 [SEP] " +
  "Cotton Running Socks 6 Pack [SEP] $12.0 to $18.5";
const ITEM = `${HEAD} [SEP] < Prev [SEP] color [SEP] black | white [SEP] navy blue [SEP] size [SEP] 9 [SEP] 10 [SEP] ` +
  "Trail Runner Men's Running Shoes [SEP] Price: $45.99 [SEP] Rating: N.A. [SEP] Description [SEP] Features [SEP] " +
  "Reviews [SEP] Buy Now";
const ITEM_CLICKABLES = [
  "back to search",
  "< prev",
  "description",
  "features",
  "reviews",
  "buy now",
  "black | white",
  "navy blue",
  "9",
  "10",
];

function session(goal = 0): WebShopSession {
  const s = new WebShopSession(world);
  s.reset(goal);
  return s;
}

// python3 -c 'import random; random.seed(233); print(sorted(random.sample([50.,60.,70.,80.],2)),
//   sorted(random.sample([20.,30.,40.,50.],2))); g=["bw9","bw10","nb9","nb10","sock"]; random.seed(233);
//   random.shuffle(g); print(g)'  ->  [60.0, 70.0] [30.0, 50.0] / ['nb9', 'bw9', 'nb10', 'sock', 'bw10']
Deno.test("goals: synthetic, one per option combination, caps and order from random.seed(233) as CPython draws", () => {
  assert.equal(world.goals.length, 5);
  const combos = world.goals.map((g) => [...(g.goalOptions as Map<string, string>).values()].join("/"));
  assert.deepEqual(combos, ["navy blue/9", "black | white/9", "navy blue/10", "", "black | white/10"]);
  assert.deepEqual(world.goals.map((g) => g.priceUpper), [70, 70, 70, 50, 70]);
  assert.deepEqual(world.goals.map((g) => g.weight), [0.25, 0.25, 0.25, 1, 0.25]);
  assert.equal(world.goals[0].instructionText, INSTR);
  assert.deepEqual(world.goals.map((g) => g.asin), [
    "B00SHOE001",
    "B00SHOE001",
    "B00SHOE001",
    "B00SOCK003",
    "B00SHOE001",
  ]);
  assert.equal(world.goals[3].instructionText, "Find me cotton running socks, and price lower than 50.00 dollars");
});

Deno.test("the start page: the logo, the instruction and the search button", () => {
  const s = new WebShopSession(world);
  assert.equal(s.reset(0), `WebShop [SEP] Instruction: [SEP] ${INSTR} [SEP] Search`);
  assert.deepEqual(s.availableActions(), { has_search_bar: true, clickables: ["search"] });
  assert.equal(s.instructionText(), `Instruction: ${INSTR}`);
});

Deno.test("search results: ten a page, asin, title and price tag, Next > always and < Prev past page one", () => {
  const s = session();
  const r = s.step("search[Running Shoes]");
  assert.deepEqual(r, { observation: RESULTS_1, reward: 0, done: false });
  assert.deepEqual(s.availableActions(), {
    has_search_bar: false,
    clickables: ["back to search", "next >", "b00shoe001", "b00shoe002", "b00sock003"],
  });
  assert.equal(s.instructionText(), `Instruction:${INSTR}`);
  const next = s.step("click[Next >]");
  assert.equal(next.observation, `${HEAD} [SEP] Page 2 (Total results: 3) [SEP] < Prev [SEP] Next >`);
  assert.deepEqual(s.availableActions().clickables, ["back to search", "< prev", "next >"]);
  assert.equal(s.step("click[< Prev]").observation, RESULTS_1);
});

Deno.test("the item page: option groups, title, price, rating, sub-page buttons and Buy Now", () => {
  const s = session();
  s.step("search[running shoes]");
  assert.equal(s.step("click[B00SHOE001]").observation, ITEM);
  assert.deepEqual(s.availableActions(), { has_search_bar: false, clickables: ITEM_CLICKABLES });
  // Choosing an option leaves the page's text as it is (the radio's checked state is not text).
  assert.equal(s.step("click[navy blue]").observation, ITEM);
  assert.equal(s.url, 'http://127.0.0.1:3000/item_page/0/B00SHOE001/running+shoes/1/{"color": "navy blue"}');
  // < Prev goes back to the same results page, options cleared.
  assert.equal(s.step("click[< prev]").observation, RESULTS_1);
});

Deno.test("sub-pages: description, features (an empty bullet is an empty piece), reviews, and < Prev back", () => {
  const s = session();
  s.step("search[running shoes]");
  s.step("click[b00shoe001]");
  assert.equal(
    s.step("click[Description]").observation,
    `${HEAD} [SEP] < Prev [SEP] Light running shoes for trail ` +
      "and road.",
  );
  assert.deepEqual(s.availableActions().clickables, ["back to search", "< prev"]);
  assert.equal(s.step("click[< prev]").observation, ITEM);
  assert.equal(
    s.step("click[features]").observation,
    `${HEAD} [SEP] < Prev [SEP] Breathable mesh upper [SEP]  [SEP] ` +
      "Rubber sole",
  );
  s.step("click[< prev]");
  assert.equal(s.step("click[reviews]").observation, `${HEAD} [SEP] < Prev`);
});

Deno.test("Buy Now: the done page with the reward, done true; the reward of goal.py", () => {
  const s = session();
  s.step("search[running shoes]");
  s.step("click[b00shoe001]");
  s.step("click[navy blue]");
  s.step("click[10]");
  const r = s.step("click[Buy Now]");
  // Attribute (rubber sole) 1 of 1, options: colour yes, size 10 against 9 no, price 45.99 <= 70: 3 of 4.
  assert.equal(r.reward, 0.75);
  assert.equal(r.done, true);
  assert.equal(
    r.observation,
    "Thank you for shopping with us! [SEP] Your code: [SEP] None [SEP] (Paste it in your MTurk interface.) [SEP] " +
      'Purchased [SEP] asin [SEP] B00SHOE001 [SEP] options [SEP] {"color": "navy blue", "size": "10"} [SEP] attrs ' +
      "[SEP] None [SEP] category [SEP] None [SEP] query [SEP] None [SEP] product category [SEP] None [SEP] Target " +
      "[SEP] asin [SEP] options [SEP] attrs [SEP] price upper [SEP] instuction text [SEP] category [SEP] product " +
      "category [SEP] query [SEP] Goal [SEP] None [SEP] Reward [SEP] Your score (min 0.0, max 1.0) [SEP] 0.75 [SEP] " +
      "Reward Details [SEP] None",
  );
  assert.deepEqual(s.availableActions(), { has_search_bar: false, clickables: [] });
  assert.equal(s.instructionText(), undefined);
  // The right options score 1; the sock goal bought as a shoe loses on type (title nouns share only "running").
  const right = session();
  right.step("search[running shoes]");
  right.step("click[b00shoe001]");
  right.step("click[navy blue]");
  right.step("click[9]");
  assert.equal(right.step("click[buy now]").reward, 1);
});

Deno.test("actions that are not valid change nothing and answer the same page, reward 0", () => {
  const s = session();
  s.step("search[running shoes]");
  for (
    const bad of [
      "click[b00shoe009]",
      "click[search]",
      "search[]",
      "jump",
      "Click[b00shoe001]",
      "click [x]",
      "click[]",
      "b00shoe001",
      "search running shoes",
      "\nsearch[shoes]",
    ]
  ) {
    assert.deepEqual(s.step(bad), { observation: RESULTS_1, reward: 0, done: false, invalid: true }, bad);
  }
  // Search works from any page, even without a search bar.
  assert.match(s.step("search[socks]").observation, /Page 1 \(Total results: 1\) \[SEP\] Next > \[SEP\] B00SOCK003/);
  assert.equal(s.step("click[back to search]").observation, `WebShop [SEP] Instruction: [SEP] ${INSTR} [SEP] Search`);
});

Deno.test("parse_action: name[arg] at the start, greedy to the last ] of the line", () => {
  assert.deepEqual(parseAction("search[red shoes] now"), { name: "search", arg: "red shoes" });
  assert.deepEqual(parseAction("click[a [b] c]"), { name: "click[a ", arg: "b] c" });
  assert.deepEqual(parseAction("search[x]\nclick[y]"), { name: "search", arg: "x" });
  assert.deepEqual(parseAction("jump"), { name: "jump", arg: undefined });
});

Deno.test("special search forms: <c> category, <q> query, <a> attribute, <r> random", () => {
  const s = session();
  assert.match(s.step("search[<c> electronics]").observation, /Total results: 1\) \[SEP\] Next > \[SEP\] B00WATCH04/);
  assert.match(s.step("search[<q> walking shoes]").observation, /Total results: 1\) \[SEP\] Next > \[SEP\] B00SHOE002/);
  assert.match(s.step("search[<a> cotton blend]").observation, /Total results: 1\) \[SEP\] Next > \[SEP\] B00SOCK003/);
  assert.match(s.step("search[<r>]").observation, /Total results: 4\)/);
});
