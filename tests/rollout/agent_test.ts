// Rollouts on a scripted policy against Crucible's TextCraft server (in process, port 0): which tokens train,
// what the policy saw, and how episodes end (done, round limit, token budget, environment failure).
import assert from "node:assert/strict";
import { envClient } from "../../tasks/mod.ts";
import { solveTask } from "../../tasks/textcraft/oracle.ts";
import { idToName } from "../../tasks/textcraft/game/python.ts";
import type { DecodeLimits, DecodePiece, Generation } from "../../src/model/generate.ts";
import type { Tokenizer } from "../../src/model/tokenizer.ts";
import { wordTokenizer } from "../../src/model/word_tokenizer.ts";
import { type RolloutOptions, runRollouts, type Sampler } from "../../src/rollout/agent.ts";
import { trainable } from "../../src/rollout/trajectory.ts";
import { textcraft } from "../../tasks/textcraft/mod.ts";
import { fakeServer, tree, withTextCraft } from "../env/helpers.ts";

/** Replies with scripted texts per sequence and records every token it was given. */
class ScriptedSampler implements Sampler {
  readonly options = { slots: 3 };
  streams = new Map<number, number[]>();
  #script = new Map<number, string[]>();
  #next = 0;
  constructor(readonly tok: Tokenizer, readonly replies: (prompt: number[]) => string[]) {}
  open(prompt: readonly number[]): number {
    const id = this.#next++;
    this.streams.set(id, [...prompt]);
    this.#script.set(id, this.replies([...prompt]));
    return id;
  }
  append(seq: number, ids: readonly number[]): void {
    this.streams.get(seq)!.push(...ids);
  }
  /** The next scripted reply of a sequence, with its stop id. */
  decodeUnrecorded(seq: number): [number[]] {
    const text = this.#script.get(seq)!.shift() ?? actionText("inventory");
    return [[...this.tok.encode(text), this.tok.id("<|im_end|>")]];
  }
  decode(seqs: readonly number[], limits: readonly DecodeLimits[]): Promise<Generation[]> {
    return Promise.resolve(seqs.map((seq, n) => {
      const ids = this.decodeUnrecorded(seq)[0].slice(0, limits[n].maxNewTokens);
      const finish = ids.length > 0 && ids[ids.length - 1] === this.tok.id("<|im_end|>") ? "stop" : "max_tokens";
      this.streams.get(seq)!.push(...ids);
      return { ids, logprobs: ids.map((_, k) => -0.1 * (k + 1)), finish } as Generation;
    }));
  }
  close(): void {}
}

/**
 * The scripted replies again, sampled `block` tokens per call of `advance` as the Generator does; records which
 * sequence took which turn in each call.
 */
class BlockSampler extends ScriptedSampler {
  calls: { seq: number; turn: number }[][] = [];
  #turns = new Map<number, { ids: number[]; at: number; count: number }>();
  constructor(tok: Tokenizer, replies: (prompt: number[]) => string[], readonly block: number) {
    super(tok, replies);
  }
  advance(seqs: readonly number[], limits: readonly DecodeLimits[]): Promise<DecodePiece[]> {
    this.calls.push(seqs.map((seq) => ({ seq, turn: this.#turns.get(seq)?.count ?? 0 })));
    return Promise.resolve(seqs.map((seq, n) => {
      let turn = this.#turns.get(seq);
      if (!turn || turn.at === turn.ids.length) {
        // A new turn: the whole scripted reply, handed out a block at a time.
        const [whole] = super.decodeUnrecorded(seq);
        turn = { ids: whole, at: 0, count: (turn?.count ?? 0) + 1 };
        this.#turns.set(seq, turn);
      }
      const ids = turn.ids.slice(turn.at, turn.at + Math.min(this.block, limits[n].maxNewTokens));
      const start = turn.at;
      turn.at += ids.length;
      this.streams.get(seq)!.push(...ids);
      const stopped = ids.at(-1) === this.tok.id("<|im_end|>");
      const piece: DecodePiece = { ids, logprobs: ids.map((_, k) => -0.1 * (start + k + 1)) };
      if (stopped) piece.finish = "stop";
      else if (ids.length >= limits[n].maxNewTokens) piece.finish = "max_tokens";
      if (piece.finish) turn.at = turn.ids.length;
      return piece;
    }));
  }
}

const actionText = (a: string) => `Thought:\nnext step.\n\nAction:\n${a}`;

async function corpusTokenizer(url: string, tasks: number[]): Promise<Tokenizer> {
  const client = envClient("textcraft", { urls: [url] });
  const texts = [textcraft.prompt.user, textcraft.prompt.assistant, actionText("inventory")];
  for (const task of tasks) {
    const env = await client.create({ parseAction: textcraft.parseAction });
    texts.push(await env.reset(task));
    for (const a of solveTask(tree, task).actions) {
      texts.push(actionText(a), (await env.step(actionText(a))).observation);
    }
    texts.push((await env.step(actionText("inventory"))).observation);
    await env.close();
  }
  client.close();
  return wordTokenizer(texts);
}

const OPTIONS: Omit<RolloutOptions, "stopIds"> = {
  maxRounds: 30,
  maxTokensPerTurn: 64,
  maxResponseLength: 4096,
  maxPromptLength: 4096,
  sampling: { temperature: 1 },
};

Deno.test("oracle episodes: sampled tokens train, observation chunks do not, and the stream is what the policy saw", async () => {
  await withTextCraft(async (server) => {
    const tasks = [0, 150, 421, 5];
    const tok = await corpusTokenizer(server.url, tasks);
    const client = envClient("textcraft", { urls: [server.url] });
    const sampler = new ScriptedSampler(tok, (prompt) => {
      const task = tasks.find((t) => tok.decode(prompt).includes(`Goal: craft ${idToName(tree.goals[t].id)}.`))!;
      return solveTask(tree, task).actions.map(actionText);
    });
    const stop = tok.id("<|im_end|>");
    const specs = tasks.map((task, i) => ({ task, group: i, seed: i }));
    const out = await runRollouts({ generator: sampler, tokenizer: tok, client, task: textcraft }, specs, {
      ...OPTIONS,
      stopIds: [stop],
    });
    client.close();
    out.forEach((t, i) => {
      const plan = solveTask(tree, tasks[i]).actions;
      assert.equal(t.finish, "done");
      assert.equal(t.reward, 1);
      assert.ok(t.success);
      assert.equal(t.rounds, plan.length);
      assert.deepEqual(t.turns.map((x) => x.action), plan);
      assert.equal(t.mask.length, t.responseIds.length);
      assert.equal(t.logprobs.length, t.responseIds.length);
      // Exactly the scripted ids have mask 1, turn by turn; everything else is a rendered chunk.
      const sampled = plan.map((a) => [...tok.encode(actionText(a)), stop]);
      let at = 0;
      sampled.forEach((ids, k) => {
        assert.deepEqual(t.responseIds.slice(at, at + ids.length), ids, `turn ${k}`);
        assert.ok(t.mask.slice(at, at + ids.length).every((m) => m === 1));
        assert.deepEqual(t.logprobs.slice(at, at + ids.length), ids.map((_, j) => -0.1 * (j + 1)));
        at += ids.length;
        if (k === plan.length - 1) return;
        const chunkEnd = t.mask.indexOf(1, at);
        const chunk = t.responseIds.slice(at, chunkEnd);
        assert.ok(
          t.mask.slice(at, chunkEnd).every((m) => m === 0) && t.logprobs.slice(at, chunkEnd).every((l) => l === 0),
        );
        assert.equal(
          tok.decode(chunk),
          `\n<|im_start|>user\n${t.turns[k].observation}<|im_end|>\n<|im_start|>assistant\n`,
        );
        at = chunkEnd;
      });
      assert.equal(at, t.responseIds.length, "the response ends with the last sampled turn");
      const stream = [...sampler.streams.values()].find((x) =>
        x.length === t.promptIds.length + t.responseIds.length &&
        t.promptIds.every((id, k) => x[k] === id)
      );
      assert.deepEqual([...t.promptIds, ...t.responseIds], stream, "token in, token out");
      assert.ok(tok.decode(t.promptIds).endsWith("<|im_end|>\n<|im_start|>assistant\n"));
    });
  });
});

Deno.test("block by block: an episode whose turn ends takes its step and goes on while a longer turn is sampled", async () => {
  await withTextCraft(async (server) => {
    // Task 0 takes one short action per turn; the other episode says a long thought first, turn after turn.
    const tasks = [0, 150];
    const tok = await corpusTokenizer(server.url, tasks);
    const client = envClient("textcraft", { urls: [server.url] });
    const long = (a: string) => actionText(a).replace("next step.", "next step. ".repeat(12));
    const script = (prompt: number[]) => {
      const task = tasks.find((t) => tok.decode(prompt).includes(`Goal: craft ${idToName(tree.goals[t].id)}.`))!;
      return solveTask(tree, task).actions.map(task === 0 ? actionText : long);
    };
    const stop = tok.id("<|im_end|>");
    const specs = tasks.map((task, i) => ({ task, group: i, seed: i }));
    const play = async (sampler: ScriptedSampler) =>
      await runRollouts({ generator: sampler, tokenizer: tok, client, task: textcraft }, specs, {
        ...OPTIONS,
        stopIds: [stop],
      });
    const blocks = new BlockSampler(tok, script, 4);
    const streamed = await play(blocks);
    const whole = await play(new ScriptedSampler(tok, script));
    client.close();
    // The same episodes token for token, log-probabilities and rendered chunks included.
    assert.deepEqual(streamed, whole);
    for (const t of streamed) assert.equal(t.finish, "done");
    // Some call sampled the short episode's second turn or later while the long one was still in its first.
    const [shortSeq, longSeq] = [0, 1];
    const overlap = blocks.calls.some((c) =>
      c.some((x) => x.seq === shortSeq && x.turn >= 1) && c.some((x) => x.seq === longSeq && x.turn === 1)
    );
    assert.ok(overlap, JSON.stringify(blocks.calls));
    // Every call had both episodes until the short one ended: no block waited on the other's turn.
    const shortCalls = blocks.calls.filter((c) => c.some((x) => x.seq === shortSeq)).length;
    assert.ok(blocks.calls.slice(0, shortCalls).every((c) => c.length === 2), JSON.stringify(blocks.calls));
  });
});

Deno.test("episodes end at the round limit and before a chunk that would pass the token budget", async () => {
  await withTextCraft(async (server) => {
    const tok = await corpusTokenizer(server.url, [3]);
    const client = envClient("textcraft", { urls: [server.url] });
    const sampler = new ScriptedSampler(tok, () => []);
    const ctx = { generator: sampler, tokenizer: tok, client, task: textcraft };
    const stopIds = [tok.id("<|im_end|>")];
    const [rounds] = await runRollouts(ctx, [{ task: 3, group: 0, seed: 0 }], { ...OPTIONS, maxRounds: 4, stopIds });
    assert.equal(rounds.finish, "max_rounds");
    assert.equal(rounds.rounds, 4);
    assert.equal(rounds.reward, 0);
    const turn = tok.encode(actionText("inventory")).length + 1;
    const budget = turn + 3; // room for one turn, not for the observation chunk after it
    const [cut] = await runRollouts(ctx, [{ task: 3, group: 0, seed: 0 }], {
      ...OPTIONS,
      maxResponseLength: budget,
      stopIds,
    });
    assert.equal(cut.finish, "length");
    assert.equal(cut.rounds, 1);
    assert.equal(cut.responseIds.length, turn, "the chunk that would overflow is not appended");
    client.close();
  });
});

Deno.test("an environment that fails mid-episode is marked env_failure with a null reward", async () => {
  const fake = fakeServer((path) => {
    if (path === "/create") return Response.json({ id: 0, observation: "Goal: craft stick.", done: false, reward: 0 });
    if (path === "/reset") return Response.json({ id: 0, observation: "Goal: craft stick." });
    return new Response("boom", { status: 500 });
  });
  const tok = wordTokenizer([
    textcraft.prompt.user,
    textcraft.prompt.assistant,
    "Goal: craft stick.",
    actionText("inventory"),
  ]);
  const client = envClient("textcraft", { urls: [fake.url], retries: 1, backoffMs: 1 });
  const ctx = { generator: new ScriptedSampler(tok, () => []), tokenizer: tok, client, task: textcraft };
  const [t] = await runRollouts(ctx, [{ task: 0, group: 0, seed: 0 }], { ...OPTIONS, stopIds: [tok.id("<|im_end|>")] });
  client.close();
  await fake.close();
  assert.equal(t.finish, "env_failure");
  assert.equal(t.reward, null);
  assert.ok(t.error && /500/.test(t.error), t.error);
});

Deno.test("a first observation too long for the prompt ends its episode as a counted prompt_overflow, not a crash", async () => {
  const huge = "Goal: craft stick. " + "stick ".repeat(22_000); // about 132 KB
  let closes = 0;
  const fake = fakeServer((path, body) => {
    if (path === "/create") return Response.json({ id: 0, observation: "", done: false, reward: 0 });
    if (path === "/reset") {
      const index = (body as { data_idx?: number })?.data_idx ?? 0;
      return Response.json({ id: 0, observation: index === 1 ? huge : "Goal: craft stick." });
    }
    if (path === "/close") return closes++, Response.json(true);
    return Response.json({ observation: "Could not execute inventory", reward: 0, done: false });
  });
  const tok = wordTokenizer([textcraft.prompt.user, textcraft.prompt.assistant, "Goal: craft stick.", actionText("x")]);
  const client = envClient("textcraft", { urls: [fake.url], retries: 0 });
  const ctx = { generator: new ScriptedSampler(tok, () => []), tokenizer: tok, client, task: textcraft };
  const specs = [0, 1].map((task) => ({ task, group: task, seed: task }));
  const [ok, over] = await runRollouts(ctx, specs, { ...OPTIONS, maxRounds: 2, stopIds: [tok.id("<|im_end|>")] });
  client.close();
  await fake.close();
  assert.equal(ok.finish, "max_rounds");
  assert.equal(over.finish, "prompt_overflow");
  assert.equal(over.reward, null);
  assert.match(over.error ?? "", /past max_prompt_length/);
  assert.ok(!trainable(over), "kept out of the update");
  assert.equal(closes, 2, "both environments closed");
});
