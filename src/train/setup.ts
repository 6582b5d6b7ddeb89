/**
 * What a run stands on: the task and its options, its environment servers (the task's embedded server when no URL
 * is given), the model (a Hugging Face directory, a checkpoint, or the built-in tiny model over the task's
 * vocabulary), and the task splits (as the servers hold them, where they say). Everything task-specific comes through
 * the Task hooks.
 */
import { parse } from "yaml";
import type { RunConfig } from "../config/schema.ts";
import type { TaskSet } from "../env/adapter.ts";
import { EnvClient } from "../env/client.ts";
import { resolveModel } from "../model/hub.ts";
import { loadModelDir, stopTokenIds } from "../model/model_dir.ts";
import { buildTinyModel, TINY_SHAPES, tinySpecOf } from "../model/tiny.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import { wordTokenizer } from "../model/word_tokenizer.ts";
import { readAgentSettings } from "./agent_settings.ts";
import { getTask } from "../../tasks/mod.ts";
import { readItemIds } from "../task/splits.ts";
import {
  type EmbeddedServer,
  loadPrompt,
  type RlWorlds,
  type Task,
  type TaskOptions,
  type TaskVocabulary,
} from "../task/task.ts";
import type { HostModel, Reporter, RunEnv } from "./types.ts";

/**
 * The task of a config with its prompt and its checked options. The prompt is the config's (inline or from a
 * file), else the one the starting model was trained with (its crucible.json), else the task's own; the options are
 * the model's with the config's on top.
 */
export async function configuredTask(c: RunConfig): Promise<{ task: Task; options: TaskOptions }> {
  const base = getTask(c.task);
  const agent = c.model.path ? await readAgentSettings(c.model.path) : undefined;
  const trained = agent?.task === base.name ? agent : undefined;
  const prompt = c.data.prompt ??
    (c.data.prompt_file ? await loadPrompt(c.data.prompt_file, base.prompt) : undefined) ??
    trained?.prompt;
  const raw = { ...trained?.task_options, ...c.task_options };
  return { task: prompt ? { ...base, prompt } : base, options: taskOptions({ ...c, task_options: raw }, base) };
}

/** A config's task_options as the task checks them; a task without options accepts none. */
export function taskOptions(c: RunConfig, task: Task = getTask(c.task)): TaskOptions {
  if (task.parseOptions) return task.parseOptions(c.task_options);
  const keys = Object.keys(c.task_options);
  if (keys.length > 0) {
    throw new TypeError(`The ${task.name} task takes no options, got "task_options.${keys[0]}"`);
  }
  return {};
}

/**
 * Checks that every file the config names exists before a run starts anything (the GPU, a server): the SFT data,
 * preference pairs, ETO's expert episodes, item files, a prompt file, the model directory, a LoRA adapter and the tiny
 * model's YAML. The error names the
 * config key.
 */
export async function checkFiles(c: RunConfig): Promise<void> {
  const files: [string, string | null][] = [
    ["sft.data", (c.sft.enabled || c.algorithm.learner === "agentevol") && c.sft.data !== "oracle" ? c.sft.data : null],
    ["data.preferences", c.data.preferences],
    ["eto.expert", c.algorithm.learner === "eto" && c.eto.expert !== "oracle" ? c.eto.expert : null],
    ["data.train_items", c.data.train_items],
    ["data.test_items", c.data.test_items],
    ["data.prompt_file", c.data.prompt === null ? c.data.prompt_file : null],
    ["model.path", c.model.path],
    ["model.adapter", c.model.adapter],
    ["model.tiny", c.model.path === null && !Object.hasOwn(TINY_SHAPES, c.model.tiny ?? "") ? c.model.tiny : null],
  ];
  for (const [key, path] of files) {
    if (path === null) continue;
    const found = await Deno.stat(path).then(() => true, () => false);
    if (found) continue;
    const hub = key === "model.path" ? " Pass a model directory, or a Hugging Face Hub name as org/name." : "";
    throw new Deno.errors.NotFound(`${key} names ${path}, which does not exist.${hub}`);
  }
}

/**
 * A model argument as a local directory: a path as is, a Hugging Face Hub name (`org/name[@revision]`) from the
 * Hugging Face cache or downloaded into it (src/model/hub.ts), with a bar in MB on `reporter`.
 */
export async function localModelPath(spec: string, reporter: Reporter): Promise<string> {
  let bar: ReturnType<Reporter["bar"]> | undefined, shown = 0;
  const dir = await resolveModel(spec, {
    start(total, files) {
      if (total > 0) bar = reporter.bar(`download ${spec} (${files} files, MB)`, Math.ceil(total / 1e6));
    },
    progress(done, file) {
      const mb = Math.floor(done / 1e6);
      if (bar && mb > shown) (bar.tick(mb - shown, file), shown = mb);
    },
    note: (text) => reporter.line(text),
  });
  bar?.done();
  return dir;
}

/**
 * Opens the task's environment: the configured servers, or the task's embedded server on a free port; with
 * data.synthetic_prompts, the embedded server that plays the task's RL worlds beside its tasks. With `inProcess`,
 * the embedded server's handler is called in this process instead (no port, no HTTP; the studio page).
 */
export async function openEnv(c: RunConfig, o: { inProcess?: boolean } = {}): Promise<RunEnv> {
  if (o.inProcess) return await inProcessEnv(c);
  const { task, options } = await configuredTask(c);
  let server: EmbeddedServer | undefined;
  let urls = c.env.urls;
  const worlds = await rlWorlds(c, task, options);
  if (worlds) {
    server = await worlds.serve();
    urls = [server.url];
  } else if (urls.length > 0) {
    const own = task.embeddedOnly?.(options) ?? [];
    if (own.length > 0) {
      throw new RangeError(
        `task_options.${own[0]}=${
          options[own[0]]
        } is paid by Crucible's embedded ${task.adapter.name} server, and env.urls ` +
          `(--env-url) names external servers, which pay the environment's own reward. Leave out --env-url ` +
          `(env.urls) to use the embedded server, or set task_options.${own[0]}=0.`,
      );
    }
  } else {
    if (!task.serve) {
      const env = task.adapter.name;
      throw new RangeError(
        `Crucible has no embedded ${env} server; start the ${env} AgentGym server and pass --env-url URL`,
      );
    }
    server = await task.serve(options);
    urls = [server.url];
  }
  const connect = (at: string[]) =>
    new EnvClient(task.adapter, {
      urls: at,
      timeoutMs: c.env.timeout_ms,
      retries: c.env.retries,
      maxInFlight: c.env.max_in_flight,
      token: envToken(),
    });
  const client = connect(urls);
  // The evaluation plays the environment's own rule: where the run's embedded server pays shaped rewards or
  // penalties (task.embeddedOnly), a second embedded server without them (external servers never pay them).
  const plain = server && task.serve ? unshapedOptions(task, options) : undefined;
  const evalServer = plain ? await task.serve!(plain) : undefined;
  const evalClient = evalServer ? connect([evalServer.url]) : client;
  return {
    task,
    options,
    client,
    evalClient,
    server,
    worlds,
    async close() {
      client.close();
      if (evalClient !== client) evalClient.close();
      await server?.shutdown();
      await evalServer?.shutdown();
    },
  };
}

/**
 * The task's options without the ones only its embedded server honours (shaped rewards, penalties), as the task
 * fills them in by default; undefined when the options set none, so the run's own server already plays the
 * environment's rule.
 */
export function unshapedOptions(task: Task, options: TaskOptions): TaskOptions | undefined {
  const own = new Set(task.embeddedOnly?.(options) ?? []);
  if (own.size === 0) return undefined;
  const rest = Object.fromEntries(Object.entries(options).filter(([k]) => !own.has(k)));
  return task.parseOptions ? task.parseOptions(rest) : rest;
}

/** The host name of the in-process game's URLs: it names no server, and nothing listens there. */
export const IN_PROCESS_HOST = "in-process.game";

/**
 * The task's environment played in this process: the same games, options and routes as its embedded server
 * (`Task.handler`), each request handed to the handler as a `Request` instead of sent over HTTP. Refused with
 * external servers (env.urls) and with data.synthetic_prompts (whose worlds are served only over HTTP).
 */
async function inProcessEnv(c: RunConfig): Promise<RunEnv> {
  const { task, options } = await configuredTask(c);
  if (c.env.urls.length > 0) {
    throw new RangeError(
      `env.urls (--env-url) names external servers, and this run plays ${task.name} in its own process; leave ` +
        "env.urls empty",
    );
  }
  if (c.data.synthetic_prompts.share > 0) {
    throw new RangeError(
      `data.synthetic_prompts.share=${c.data.synthetic_prompts.share} plays synthetic worlds on an embedded server ` +
        "over HTTP, and this run plays the task in its own process; set data.synthetic_prompts.share=0",
    );
  }
  if (!task.handler) {
    throw new RangeError(`The ${task.name} task cannot be played in-process (it has no embedded server's handler)`);
  }
  const connect = (handler: (req: Request) => Promise<Response>) =>
    new EnvClient(task.adapter, {
      urls: [`http://${IN_PROCESS_HOST}`],
      timeoutMs: c.env.timeout_ms,
      retries: c.env.retries,
      maxInFlight: c.env.max_in_flight,
      fetch: (url, init) => handler(new Request(url, init)),
    });
  const client = connect(await task.handler(options));
  // The evaluation's games pay the environment's own rule, as openEnv's second server does.
  const plain = unshapedOptions(task, options);
  const evalClient = plain ? connect(await task.handler(plain)) : client;
  return {
    task,
    options,
    client,
    evalClient,
    close: () => {
      client.close();
      if (evalClient !== client) evalClient.close();
      return Promise.resolve();
    },
  };
}

/**
 * The task's RL worlds when data.synthetic_prompts asks for them: never the run's test tasks, from the option's seed.
 * Refused for a task without them and with external servers (env.urls), which know only the task's own tasks.
 */
async function rlWorlds(c: RunConfig, task: Task, options: TaskOptions): Promise<RlWorlds | undefined> {
  const share = c.data.synthetic_prompts.share;
  if (share === 0) return undefined;
  const key = `data.synthetic_prompts.share=${share}`;
  if (!task.rlWorlds) {
    throw new RangeError(`${key} asks for synthetic worlds, which the ${task.name} task does not make; set it to 0`);
  }
  if (c.env.urls.length > 0) {
    throw new RangeError(
      `${key} plays synthetic worlds on Crucible's embedded ${task.adapter.name} server, and env.urls (--env-url) ` +
        `names external servers, which know only the task's own tasks. Leave out --env-url (env.urls) to use the ` +
        `embedded server, or set data.synthetic_prompts.share=0.`,
    );
  }
  await checkWorldSeed(c);
  return await task.rlWorlds(options, {
    seed: c.data.synthetic_prompts.seed,
    // The test split as the config and the task define it. A server's own splits (GET /tasks) can be read only once
    // it runs; TextCraft's, the one task with worlds, publishes none, so this is the split the run evaluates.
    exclude: (await splitIndices(c, { task }, "test")).indices,
  });
}

/**
 * Refuses a world seed that pretraining drew from: the config's pretrain.seed and pretrain.eval_seed, and those of
 * the starting model's recipe (its pretrain.yaml, which a base model Crucible built keeps).
 */
async function checkWorldSeed(c: RunConfig): Promise<void> {
  const seed = c.data.synthetic_prompts.seed;
  const used: [string, unknown][] = [["pretrain.seed", c.pretrain.seed], ["pretrain.eval_seed", c.pretrain.eval_seed]];
  const recipe = c.model.path ? `${c.model.path}/pretrain.yaml` : undefined;
  const text = recipe ? await Deno.readTextFile(recipe).catch(() => undefined) : undefined;
  if (text !== undefined) {
    const p = (parse(text) as { pretrain?: { seed?: unknown; eval_seed?: unknown } } | null)?.pretrain;
    used.push([`pretrain.seed of ${recipe}`, p?.seed], [`pretrain.eval_seed of ${recipe}`, p?.eval_seed]);
  }
  const same = used.find(([, s]) => s === seed);
  if (same) {
    throw new RangeError(
      `data.synthetic_prompts.seed=${seed} is ${same[0]}, a seed pretraining drew its worlds from; RL's worlds must ` +
        "be fresh: pick another seed",
    );
  }
}

/** The key of the environment servers, from CRUCIBLE_ENV_TOKEN (never from the config, which is saved in the run). */
function envToken(): string | undefined {
  try {
    return Deno.env.get("CRUCIBLE_ENV_TOKEN") || undefined;
  } catch {
    return undefined; // no permission to read the environment: no key
  }
}

/** Checks that an environment answers before a run spends time on it; a clear error names the URL. */
export async function checkEnv(env: RunEnv): Promise<void> {
  try {
    const s = await env.client.create({});
    await s.close();
  } catch (e) {
    const urls = env.client.transport.health().map((h) => h.url);
    throw new Error(
      `The ${env.task.adapter.name} server at ${urls.join(", ")} does not answer (${(e as Error).message}). ` +
        startServerHint(env.task, urls[0]),
    );
  }
}

/** How to get a server of `task`'s environment answering at `url`: the command that starts one, or its absence. */
export function startServerHint(task: Task, url: string | undefined): string {
  const port = url ? (URL.parse(url)?.port || "PORT") : "PORT", env = task.adapter.name;
  if (task.serve) {
    return `Start one there with \`deno task serve ${env} --port ${port}\` (in another terminal), or leave ` +
      `out --env-url (config env.urls) and the run starts Crucible's embedded ${env} server itself.`;
  }
  return `Start AgentGym's ${env} server there (its agentenv-${env} package: \`${env} --host ` +
    `127.0.0.1 --port ${port}\`), or pass the URL of one that runs with --env-url URL (config env.urls).`;
}

/** Loads the configured model: a Hugging Face directory, or the built-in tiny model over the task's vocabulary. */
export async function loadModel(c: RunConfig, task: Task): Promise<HostModel> {
  if (c.model.path) {
    const m = await loadModelDir(c.model.path);
    if (!m.tokenizer) {
      throw new TypeError(`${c.model.path} has no tokenizer.json; Crucible needs one to talk to an environment`);
    }
    return {
      config: m.config,
      dtype: m.dtype,
      tensors: m.tensors,
      tokenizer: m.tokenizer,
      stopIds: stopTokenIds(m),
      source: c.model.path,
    };
  }
  const vocabulary = await tinyVocabulary(task);
  const spec = await tinySpecOf(c.model.tiny);
  const tiny = buildTinyModel(vocabulary.corpus, spec, vocabulary.phrases);
  return {
    ...tiny,
    dtype: "f32",
    stopIds: stopTokenIds({ config: tiny.config, tokenizer: tiny.tokenizer }),
    source: "tiny",
  };
}

/**
 * The tokenizer a fresh built-in tiny model of `task` gets today (loadModel's): word-level over the task's vocabulary
 * for its prompt. A saved model keeps its own; `deno task pretrain --extend-vocab` appends what this one has more.
 */
export async function taskTokenizer(task: Task): Promise<Tokenizer> {
  const vocabulary = await tinyVocabulary(task);
  return wordTokenizer(vocabulary.corpus, { phrases: vocabulary.phrases });
}

async function tinyVocabulary(task: Task): Promise<TaskVocabulary> {
  if (!task.vocabulary) {
    throw new RangeError(`The built-in tiny model has no vocabulary for ${task.name}; pass --model DIR`);
  }
  return await task.vocabulary(task.prompt);
}

/** A split's task indices and, where they are not the servers' own split, a line saying what they play. */
export interface SplitTasks {
  indices: number[];
  note?: string;
}

/**
 * The task indices of a split: an item file when configured, else the split of that name the servers publish
 * (`served`, from EnvClient.tasks: Crucible's BFCL server holding BFCL's files publishes `bfcl`, all of them), else
 * the task's built-in split. Indices past the tasks the servers hold are an error (a reset takes the index mod their
 * number, so they would replay others); a built-in split the servers hold but do not publish comes with a note.
 */
export async function splitIndices(
  c: RunConfig,
  from: { task: Task; served?: TaskSet },
  which: "train" | "test",
): Promise<SplitTasks> {
  const { task, served } = from;
  const file = which === "train" ? c.data.train_items : c.data.test_items;
  const name = which === "train" ? c.data.train_split : c.data.test_split;
  const what = file ? `data.${which}_items=${file}` : `split "${name}" (data.${which}_split)`;
  const held = served && `the ${task.adapter.name} server holds ${served.count} tasks` +
      (served.about ? ` (${served.about})` : "") +
      (served.splits ? `, in splits ${Object.keys(served.splits).join(", ")}` : "");
  const check = (indices: number[]): number[] => {
    const past = served ? indices.filter((i) => i >= served.count) : [];
    if (past.length > 0) {
      throw new RangeError(
        `${what} names tasks up to index ${Math.max(...past)}, but ${held}; a reset takes the index modulo that, ` +
          `so ${past.length} of them would replay other tasks. Pick a split the server holds, or serve the tasks ` +
          "meant.",
      );
    }
    return indices;
  };
  if (file) return { indices: check(await readItemIds(file, task.name)) };
  const published = served?.splits?.[name];
  if (published) return { indices: [...published] };
  const split = task.splits?.[name];
  if (!split) {
    const names = [...new Set([...Object.keys(served?.splits ?? {}), ...Object.keys(task.splits ?? {})])];
    throw new RangeError(
      `${task.name} has no built-in split "${name}" (data.${which}_split); ` +
        (names.length ? `its splits are ${names.join(", ")}. Or ` : "it has none built in: ") +
        `give data.${which}_items=FILE (an AgentGym-RL-Data-ID item file)`,
    );
  }
  const indices = check([...split]);
  if (!served?.splits) return { indices };
  return {
    indices,
    note: `note: ${what} is ${task.name}'s own ${span(indices)}, which the server does not publish: ${held}. ` +
      `Its tasks at those indices are played and labelled as the server names them.`,
  };
}

/**
 * The task's category hook reading what the servers say (undefined for a task without categories): the labels an
 * episode's reset answered, else those the servers publish for the index (`served.labels`, from GET /tasks), else
 * the task's own by index. Signal sampling groups the train split with it before any prompt is played, and counts
 * each played group into its category with it, so both follow the tasks served rather than their indices.
 */
export function servedCategory(
  task: Task,
  served?: TaskSet,
): ((index: number, info?: Readonly<Record<string, unknown>>) => string) | undefined {
  const category = task.category;
  if (!category) return undefined;
  return (index, info) => category.call(task, index, info ?? served?.labels?.[index]);
}

/** A list of indices in words: "tasks 400-499" when contiguous, else "100 tasks". */
function span(indices: readonly number[]): string {
  const lo = Math.min(...indices), hi = Math.max(...indices);
  return indices.length > 1 && hi - lo + 1 === indices.length ? `tasks ${lo}-${hi}` : `${indices.length} tasks`;
}
