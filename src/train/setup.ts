/**
 * What a run stands on: the task, its environment servers (Crucible's embedded TextCraft server when no URL is
 * given), the model (a Hugging Face directory, a checkpoint, or the built-in tiny model), and the task splits.
 */
import type { RunConfig } from "../config/schema.ts";
import { envClient } from "../env/adapters/mod.ts";
import type { EnvClient } from "../env/client.ts";
import { textCraftCorpus } from "../env/textcraft/corpus.ts";
import { serveTextCraft, type TextCraftServer } from "../env/textcraft/server.ts";
import { idToName } from "../env/textcraft/python.ts";
import { CraftingTree } from "../env/textcraft/tree.ts";
import { loadModelDir, stopTokenIds } from "../model/checkpoint.ts";
import type { ModelConfig } from "../model/config.ts";
import { buildTinyModel, parseTinySpec } from "../model/tiny.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { getTask } from "../../tasks/mod.ts";
import { readItemIds } from "../../tasks/splits.ts";
import { loadPrompt, type Task } from "../../tasks/task.ts";
import { oracleReply } from "./sft_data.ts";

/** The environment side of a run. */
export interface RunEnv {
  task: Task;
  client: EnvClient;
  /** The embedded server, when the run started one. */
  server?: TextCraftServer;
  close(): Promise<void>;
}

/** Opens the task's environment: the configured servers, or an embedded TextCraft server on a free port. */
export async function openEnv(c: RunConfig): Promise<RunEnv> {
  const base = getTask(c.task);
  const prompt = c.data.prompt ?? (c.data.prompt_file ? await loadPrompt(c.data.prompt_file, base.prompt) : undefined);
  const task = prompt ? { ...base, prompt } : base;
  let server: TextCraftServer | undefined;
  let urls = c.env.urls;
  if (urls.length === 0) {
    if (task.env !== "textcraft") {
      throw new RangeError(
        `Crucible embeds a TextCraft server only; start the ${task.env} AgentGym server and pass --env-url URL`,
      );
    }
    server = await serveTextCraft({ port: 0 });
    urls = [server.url];
  }
  const client = envClient(task.env, {
    urls,
    timeoutMs: c.env.timeout_ms,
    retries: c.env.retries,
    maxInFlight: c.env.max_in_flight,
  });
  return {
    task,
    client,
    server,
    async close() {
      client.close();
      await server?.shutdown();
    },
  };
}

/** Checks that an environment answers before a run spends time on it; a clear error names the URL. */
export async function checkEnv(env: RunEnv): Promise<void> {
  try {
    const s = await env.client.create({});
    await s.close();
  } catch (e) {
    const urls = env.client.transport.health().map((h) => h.url).join(", ");
    throw new Error(`The ${env.task.env} server at ${urls} does not answer: ${(e as Error).message}`);
  }
}

/** A model's host-side parts. */
export interface HostModel {
  config: ModelConfig;
  tensors: Map<string, Float32Array>;
  tokenizer: Tokenizer;
  stopIds: number[];
  /** Where it came from, for the run log. */
  source: string;
}

/** Loads the configured model: a Hugging Face directory, or the built-in tiny model for TextCraft. */
export async function loadModel(c: RunConfig, task: Task): Promise<HostModel> {
  if (c.model.path) {
    const m = await loadModelDir(c.model.path);
    if (!m.tokenizer) {
      throw new TypeError(`${c.model.path} has no tokenizer.json; Crucible needs one to talk to an environment`);
    }
    return {
      config: m.config,
      tensors: m.tensors,
      tokenizer: m.tokenizer,
      stopIds: stopTokenIds(m),
      source: c.model.path,
    };
  }
  if (task.name !== "textcraft") {
    throw new RangeError(`The built-in tiny model knows TextCraft's words only; pass --model DIR for ${task.name}`);
  }
  const spec = c.model.tiny ? parseTinySpec(await Deno.readTextFile(c.model.tiny), c.model.tiny) : parseTinySpec();
  const tree = await CraftingTree.load();
  const extra = [task.prompt.user, task.prompt.assistant, oracleReply("inventory", "thought"), "Action: inventory"];
  // Item names stay whole tokens: the model copies them from the command list.
  const names = [...tree.items, ...tree.tags].map(idToName);
  const tiny = buildTinyModel(textCraftCorpus(tree, extra), spec, names);
  return { ...tiny, stopIds: stopTokenIds({ config: tiny.config, tokenizer: tiny.tokenizer }), source: "tiny" };
}

/** The task indices of a split: an item file when configured, else the task's built-in split. */
export async function splitIndices(c: RunConfig, task: Task, which: "train" | "test"): Promise<number[]> {
  const file = which === "train" ? c.data.train_items : c.data.test_items;
  if (file) return await readItemIds(file, task.name);
  const name = which === "train" ? c.data.train_split : c.data.test_split;
  const split = task.splits?.[name];
  if (!split) {
    throw new RangeError(
      `${task.name} has no built-in "${name}" split; give data.${which}_items=FILE (an AgentGym-RL-Data-ID item file)`,
    );
  }
  return [...split];
}
