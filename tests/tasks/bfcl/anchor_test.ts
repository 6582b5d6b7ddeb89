// BFCL's anchors (tasks/bfcl/anchor.ts): the server says with every step the state it left (state_key.ts), the same
// observation over two states of the classes is two anchors, one state by two paths is one anchor, the file system's
// working directory counts though BFCL's state check leaves it out, and a rollout's turns carry them.
import assert from "node:assert/strict";
import { wordTokenizer } from "../../../src/model/word_tokenizer.ts";
import { runRollouts } from "../../../src/rollout/agent.ts";
import { ScriptedSampler } from "../../../src/rollout/scripted.ts";
import { stateAnchor } from "../../../src/task/anchor.ts";
import { bfclAnchor } from "../../../tasks/bfcl/anchor.ts";
import { newInstance } from "../../../tasks/bfcl/classes/api.ts";
import { BfclEpisode } from "../../../tasks/bfcl/episode.ts";
import { bfclGame, generatedSource } from "../../../tasks/bfcl/server.ts";
import { sortedJson } from "../../../tasks/bfcl/state_key.ts";
import { bfcl } from "../../../tasks/bfcl/mod.ts";
import { envClient } from "../../../tasks/mod.ts";

const source = generatedSource();
/** A generated entry with the file system alone. */
const TASK = source.entries.findIndex((e) => e.involvedClasses.join() === "GorillaFileSystem");

/** What the client has seen after playing `calls` on a fresh episode of TASK. */
function played(calls: string[]) {
  const game = bfclGame(source);
  const reset = game.reset(BigInt(TASK)) as { observation: string; info: Record<string, unknown> };
  const turns = calls.map((c) => ({ action: c, ...game.step(c) }));
  const last = turns.at(-1) ?? reset;
  return { firstObservation: reset.observation, turns, observation: last.observation, info: last.info };
}

Deno.test("every step says the state it left, and the anchor reads it beside the observation", () => {
  const seen = played(["[pwd()]"]);
  assert.match(String(seen.info?.state), /^[0-9a-f]{16}$/);
  assert.equal(bfclAnchor(seen), `${seen.observation}\nstate ${seen.info!.state}`);
  // A server that says no state: the observation alone.
  assert.equal(bfclAnchor({ ...seen, info: undefined }), seen.observation);
  assert.equal(bfclAnchor({ ...seen, info: { id: "multi_turn_base_8" } }), seen.observation);
});

Deno.test("the same observation over two states of the classes is two anchors; one state by two paths is one", () => {
  const start = played(["[pwd()]"]);
  const made = played(["[mkdir(dir_name='gigpo')]", "[pwd()]"]);
  assert.equal(made.observation, start.observation, "pwd answers the same");
  assert.notEqual(stateAnchor(bfcl, made), stateAnchor(bfcl, start));
  assert.equal(stateAnchor({}, made), stateAnchor({}, start), "the observation alone cannot tell them apart");
  // A read changes nothing; into a directory and out again is where one started.
  assert.equal(stateAnchor(bfcl, played(["[ls()]", "[pwd()]"])), stateAnchor(bfcl, start));
  const around = played(["[mkdir(dir_name='gigpo')]", "[cd(folder='gigpo')]", "[cd(folder='..')]", "[pwd()]"]);
  assert.equal(stateAnchor(bfcl, around), stateAnchor(bfcl, made));
});

Deno.test("the working directory counts, though BFCL's state check leaves it out; so does the user turn", () => {
  const ep = new BfclEpisode(source.entries[TASK], source.docs, newInstance);
  ep.reset();
  ep.step("[mkdir(dir_name='gigpo')]");
  const [states, key] = [JSON.stringify(ep.states()), ep.stateKey()];
  ep.step("[cd(folder='gigpo')]");
  assert.equal(JSON.stringify(ep.states()), states, "the checker's state is the same");
  assert.notEqual(ep.stateKey(), key, "the working directory is not");
  ep.step("[cd(folder='..')]");
  assert.equal(ep.stateKey(), key);
  ep.step("Done.");
  assert.notEqual(ep.stateKey(), key, "the next user turn");
  assert.equal(sortedJson({ b: [1, { d: 2, c: null }], a: "x" }), sortedJson({ a: "x", b: [1, { c: null, d: 2 }] }));
  assert.notEqual(sortedJson([1, 2]), sortedJson([2, 1]), "lists keep their order");
});

Deno.test("a rollout against the server keeps the anchors the states give", async () => {
  const replies = ["[mkdir(dir_name='gigpo')]", "[cd(folder='gigpo')]", "[cd(folder='..')]", "[ls()]"];
  const first = played([]).firstObservation;
  const tok = wordTokenizer([bfcl.prompt.user, bfcl.prompt.assistant, first, ...replies]);
  const server = await bfcl.serve!(bfcl.parseOptions!({}));
  const client = envClient("bfcl", { urls: [server.url] });
  try {
    const sampler = new ScriptedSampler(tok, () => replies, tok.id("<|im_end|>"));
    const [t] = await runRollouts({ generator: sampler, tokenizer: tok, client, task: bfcl }, [
      { task: TASK, group: 0, seed: 0 },
    ], {
      maxRounds: 4,
      maxTokensPerTurn: 64,
      maxPromptLength: 1_000_000,
      maxResponseLength: 1_000_000,
      sampling: { temperature: 1 },
      stopIds: [tok.id("<|im_end|>")],
    });
    assert.deepEqual(t.turns.map((x) => x.action), replies);
    // Each turn acts from the state the calls before it left; the first from the entry's own.
    const want = [0, 1, 2, 3].map((k) => stateAnchor(bfcl, played(replies.slice(0, k))));
    assert.equal(want[0], stateAnchor({}, played([])), "the first: its observation");
    assert.deepEqual(t.turns.map((x) => x.anchor), want);
    assert.notEqual(want[1], want[3], "after mkdir and after coming back: the same state, another observation");
  } finally {
    client.close();
    await server.shutdown();
  }
});
