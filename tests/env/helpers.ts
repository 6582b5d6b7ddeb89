/** Shared test helpers: one loaded crafting tree, in-process servers on port 0, and small HTTP shortcuts. */
import {
  serveTextCraft,
  type TextCraftServer,
  type TextCraftServerOptions,
} from "../../tasks/textcraft/game/server.ts";
import { CraftingTree } from "../../tasks/textcraft/game/tree.ts";
import type { EnvClient } from "../../src/env/client.ts";
import type { Tokenizer } from "../../src/model/tokenizer.ts";
import { runRollouts } from "../../src/rollout/agent.ts";
import { ScriptedSampler } from "../../src/rollout/scripted.ts";
import type { Trajectory } from "../../src/rollout/trajectory.ts";
import type { Task } from "../../src/task/task.ts";

/** The checked-in tree, loaded once per test process. */
export const tree: CraftingTree = await CraftingTree.load();

/** Runs `fn` against a fresh in-process TextCraft server on a free loopback port, then shuts it down. */
export async function withTextCraft(
  fn: (server: TextCraftServer) => Promise<void>,
  options: TextCraftServerOptions = {},
): Promise<void> {
  const server = await serveTextCraft({ port: 0, tree, ...options });
  try {
    await fn(server);
  } finally {
    await server.shutdown();
  }
}

/** POSTs JSON (or raw text, still labelled JSON) and returns status and parsed body (text when not JSON). */
export async function post(url: string, body: unknown, raw = false): Promise<{ status: number; body: unknown }> {
  const headers = { "content-type": "application/json" };
  const res = await fetch(url, { method: "POST", headers, body: raw ? body as string : JSON.stringify(body) });
  return { status: res.status, body: parse(await res.text()) };
}

/** GETs a URL and returns status and parsed body (text when not JSON). */
export async function get(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: parse(await res.text()) };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The body a server answers for an id it does not hold (upstream's message, then Crucible's explanation). */
export function notValid(id: number | string, idle = "30 min"): { error: string } {
  return {
    error: `The id ${id} is not valid. No live environment has it: it was closed, unused for ${idle} and reaped, or ` +
      "created by an earlier run of a server that has restarted since (ids are random and never reused). Create a " +
      "new environment.",
  };
}

/** Index of the task whose goal is `id` (e.g. `minecraft:stick`). */
export function taskOf(id: string): number {
  const i = tree.goals.findIndex((g) => g.id === id);
  if (i < 0) throw new RangeError(`${id} is not a goal`);
  return i;
}

/** A fake server on a free loopback port that records requests. */
export interface Fake {
  url: string;
  requests: { method: string; path: string; query: string; body: unknown }[];
  close(): Promise<void>;
}

/** Starts a fake server whose `answer` decides every response. */
export function fakeServer(answer: (path: string, body: unknown, n: number) => Response | Promise<Response>): Fake {
  const requests: Fake["requests"] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    const body = text === "" ? undefined : JSON.parse(text);
    requests.push({ method: req.method, path: url.pathname, query: url.search, body });
    return answer(url.pathname, body, requests.length);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, requests, close: () => server.shutdown() };
}

/** A JSON response. */
export function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
}

/**
 * Plays scripted replies through the one episode loop (rollout/agent.ts): episode k plays task `index` with
 * `replies` (then empty replies) for at most `maxRounds` rounds (default: the number of replies, the longest
 * script's for all).
 */
export function playScripts(
  client: EnvClient,
  task: Task,
  tokenizer: Tokenizer,
  episodes: { index: number; replies: string[] }[],
  maxRounds = Math.max(...episodes.map((e) => e.replies.length)),
): Promise<Trajectory[]> {
  const stop = tokenizer.id("<|im_end|>");
  const sampler = new ScriptedSampler(tokenizer, (seed) => episodes[seed].replies, stop);
  const specs = episodes.map((e, i) => ({ task: e.index, group: i, seed: i }));
  return runRollouts({ generator: sampler, tokenizer, client, task }, specs, {
    maxRounds,
    maxTokensPerTurn: 1 << 20,
    maxPromptLength: 1 << 20,
    maxResponseLength: 1 << 20,
    sampling: {},
    stopIds: [stop],
  });
}
