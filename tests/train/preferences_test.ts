// Preference pairs in TRL's conversational format and AgentGym's: both round-trip, a system message and shared
// context are read, a malformed entry stops with the file, the line and the field, and a pair becomes sequences that
// train on the agent's turns only over one shared prompt.
import assert from "node:assert/strict";
import { textCraftCorpus } from "../../tasks/textcraft/vocabulary.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import {
  formatPreferences,
  pairSequences,
  parsePreferences,
  PREFERENCE_FORMATS,
  type TextPair,
} from "../../src/train/preferences.ts";
import { tree } from "../env/helpers.ts";

const tok = wordTokenizer(textCraftCorpus(tree, [textcraft.prompt.user, textcraft.prompt.assistant, "Action: x"]));
const stop = tok.id("<|im_end|>");

const PAIRS: TextPair[] = [
  {
    id: 12,
    opening: { user: "Craft things.", assistant: "OK.", observation: "Goal: craft stick." },
    chosen: [
      { role: "assistant", content: "Action: get 1 oak logs", loss: true },
      { role: "user", content: "Got 1 oak logs" },
      { role: "assistant", content: "Action: craft 4 oak planks using 1 oak logs", loss: true },
    ],
    rejected: [{ role: "assistant", content: "Action: inventory", loss: true }],
  },
  {
    opening: { user: 'Craft "quoted" [things],\nplease.', assistant: "OK.", observation: "Goal: craft torch." },
    chosen: [{ role: "assistant", content: "Action: get 1 coal", loss: true }],
    rejected: [
      { role: "assistant", content: "Action: get 9 coal", loss: false },
      { role: "user", content: "Could not find enough items to get 9 coal." },
    ],
  },
];

Deno.test("both formats round-trip, as JSONL and as a JSON array", () => {
  for (const format of PREFERENCE_FORMATS) {
    const text = formatPreferences(PAIRS, format);
    assert.equal(text.trim().split("\n").length, 2);
    // TRL's messages carry no loss flag and no id: the agent's turns come back trained.
    const want = format === "trl"
      ? PAIRS.map(({ id: _, ...p }) => ({
        ...p,
        rejected: p.rejected.map((t) => (t.role === "assistant" ? { ...t, loss: true } : t)),
      }))
      : PAIRS;
    assert.deepEqual(parsePreferences(text, `pairs.${format}.jsonl`), want, format);
    const array = JSON.stringify(text.trim().split("\n").map((l) => JSON.parse(l)), null, 4);
    assert.deepEqual(parsePreferences(array, `pairs.${format}.json`), want, `${format} as a JSON array`);
  }
  const line = JSON.parse(formatPreferences(PAIRS.slice(0, 1), "agentgym"));
  assert.deepEqual(Object.keys(line), ["id", "prompt", "chosen", "rejected"]);
  assert.deepEqual(line.prompt.map((t: { from: string }) => t.from), ["human", "gpt", "human"]);
  assert.deepEqual(line.chosen[1], { from: "human", value: "Got 1 oak logs", loss: false });
  const trl = JSON.parse(formatPreferences(PAIRS.slice(0, 1), "trl"));
  assert.deepEqual(trl.chosen[0], { role: "assistant", content: "Action: get 1 oak logs" });
});

Deno.test("TRL's system message opens the instructions; prompt turns past the opening are shared context", () => {
  const entry = {
    prompt: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Craft things." },
      { role: "assistant", content: "OK." },
      { role: "user", content: "Goal: craft stick." },
      { role: "assistant", content: "Action: inventory" },
      { role: "user", content: "Got 1 oak logs" },
    ],
    chosen: [{ role: "assistant", content: "Action: get 1 oak logs" }],
    rejected: [{ role: "assistant", content: "Action: get 1 stick" }],
  };
  const [p] = parsePreferences(JSON.stringify(entry), "s.jsonl");
  assert.equal(p.opening.user, "Be brief.\n\nCraft things.");
  assert.deepEqual(p.context, [
    { role: "assistant", content: "Action: inventory", loss: false },
    { role: "user", content: "Got 1 oak logs" },
  ]);
  const s = pairSequences(p, { tokenizer: tok, stopId: stop });
  // The context is in both sequences, trained in neither; each side trains on its own reply alone.
  for (const [q, reply] of [[s.chosen, "Action: get 1 oak logs"], [s.rejected, "Action: get 1 stick"]] as const) {
    const trained = q.mask.map((m, j) => (m ? q.ids[q.promptLength + j] : -1)).filter((x) => x >= 0);
    assert.deepEqual(trained, [...tok.encode(reply), stop]);
    assert.ok(tok.decode(q.ids).includes("Got 1 oak logs"));
  }
  assert.deepEqual(s.chosen.ids.slice(0, s.chosen.promptLength), s.rejected.ids.slice(0, s.rejected.promptLength));
});

Deno.test("a pair's sequences train on the agent's turns (loss false excepted), observations are context", () => {
  const s = pairSequences(PAIRS[1], { tokenizer: tok, stopId: stop });
  assert.deepEqual(s.chosen.ids.slice(0, s.chosen.promptLength), s.rejected.ids.slice(0, s.rejected.promptLength));
  assert.ok(s.rejected.mask.every((m) => m === 0), "loss false: nothing of the rejected side trains");
  const trained = s.chosen.mask.map((m, j) => (m ? s.chosen.ids[s.chosen.promptLength + j] : -1)).filter((x) => x >= 0);
  assert.deepEqual(trained, [...tok.encode("Action: get 1 coal"), stop]);
});

Deno.test("a malformed pair stops with one message naming the file, the line and the field", () => {
  const good = formatPreferences(PAIRS, "agentgym").trim().split("\n");
  const cases: [string, RegExp][] = [
    [
      [good[0], good[1], '{"prompt": 3}'].join("\n"),
      /^SyntaxError: f\.jsonl line 3: field "prompt" must be a non-empty list/,
    ],
    [
      [good[0], "", good[1].replace('"from":"gpt","value":"Action: get 1 coal"', '"from":"bot","value":"x"')].join(
        "\n",
      ),
      /^SyntaxError: f\.jsonl line 3: field "chosen\[0\]\.from" is "bot"; expected human or gpt/,
    ],
    [good[0].replace('"value":"Got 1 oak logs"', '"value":7'), /line 1: field "chosen\[1\]\.value" must be a string/],
    [
      good[1].replace(/"rejected":.*$/, '"rejected":[{"from":"human","value":"x"}]}'),
      /field "rejected\[0\]" is a user turn/,
    ],
    [
      JSON.stringify({ prompt: [{ role: "user", content: "a" }], chosen: [], rejected: [] }),
      /line 1: field "prompt" must open with instructions, acknowledgement and first observation/,
    ],
    ["{oops", /^SyntaxError: f\.jsonl line 1: not JSON/],
    ["", /line 1: the file is empty/],
  ];
  for (const [text, want] of cases) assert.throws(() => parsePreferences(text, "f.jsonl"), want);
  // In a JSON array, the line an entry starts on.
  const array = `[\n  ${good[0]},\n  {"prompt": [], "chosen": [], "rejected": []}\n]`;
  assert.throws(() => parsePreferences(array, "a.json"), /^SyntaxError: a\.json line 3: field "prompt"/);
});
