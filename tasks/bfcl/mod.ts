/**
 * BFCL multi-turn function calling: the user asks for things turn by turn, the model calls the tools of BFCL's API
 * classes until it answers in plain text, and BFCL's checker judges each turn. The task's parts, reached by the
 * trainer only through the Task hooks: the embedded server (BFCL's files from `task_options.data_dir`, else the
 * generated tasks), per-category and per-class results, the oracle's demonstrations from ground truth, the tiny
 * model's vocabulary, synthetic tasks for pretraining a base model (synthetic.ts), the first observation's tool
 * documents for a chat template that reads `tools`, and what identifies a state for GiGPO (anchor.ts).
 */
import { bfclAdapter } from "../../src/env/adapters/bfcl.ts";
import { bfclAnchor } from "./anchor.ts";
import type { Task } from "../../src/task/task.ts";
import { type EpisodeOptions, splitToolList } from "./episode.ts";
import { oracleReplies } from "./oracle.ts";
import { type BfclOptions, generatedSet, parseBfclOptions } from "./options.ts";
import { BFCL_PROMPT } from "./prompt.ts";
import { bfclSynthetic } from "./synthetic.ts";
import { type BfclSource, bfclSource, GENERATED, generatedSource, serveBfcl } from "./server.ts";
import { bfclVocabulary } from "./vocabulary.ts";

const range = (lo: number, n: number) => Array.from({ length: n }, (_, i) => lo + i);

/**
 * The entries the last embedded server holds (BFCL's files once a data directory was served, else generated): the
 * labels of a task index when no episode brought the server's own (its reset `info`, tasks/bfcl/server.ts).
 */
let served: BfclSource | undefined;
const source = () => served ?? generatedSource();

/** The category a reset's `info` names, if it names one. */
function servedCategory(info?: Readonly<Record<string, unknown>>): string | undefined {
  return typeof info?.category === "string" ? info.category : undefined;
}

/** The entry id a reset's `info` names, if it names one. */
function servedId(info?: Readonly<Record<string, unknown>>): string | undefined {
  return typeof info?.id === "string" ? info.id : undefined;
}

/** The involved classes a reset's `info` names, if it names them. */
function servedClasses(info?: Readonly<Record<string, unknown>>): string[] | undefined {
  const c = info?.involved_classes;
  return Array.isArray(c) && c.every((x) => typeof x === "string") ? c : undefined;
}

/** The episode rules the options ask for. */
export function episodeOptions(o: BfclOptions): EpisodeOptions {
  return {
    format: o.call_format === "envtuning" ? "envtuning" : "auto",
    formatErrors: o.format_errors,
    strictEmptyTurns: o.strict_empty_turns,
    rewards: o.rewards,
    feedback: o.feedback,
  };
}

export { oracleReplies };

/** The BFCL task. 60 rounds: BFCL allows 20 steps a turn; generated entries need at most about 10 in all. */
export const bfcl: Task = {
  name: "bfcl",
  adapter: bfclAdapter,
  prompt: BFCL_PROMPT,
  parseAction: (text) => ({ action: text }),
  // The server's `passed` at the end (every turn passed BFCL's checks), which holds under any reward mode; a server
  // that does not say it: a reward of 1 (BFCL's pass, EnvTuning's progress of 1).
  isSuccess: (reward, info) => typeof info?.passed === "boolean" ? info.passed : reward === 1,
  maxRounds: 60,
  // BFCL's pass and EnvTuning's progress are in 0..1, its stage 1-2 format reward in 0..2 (rewards.ts).
  rewardRange: (options) => [0, parseBfclOptions(options).rewards === "format" ? 2 : 1],
  // train/test: the generated tasks; bfcl: BFCL's own 800 multi-turn entries (4 categories x 200) when
  // task_options.data_dir holds them.
  splits: {
    train: range(0, GENERATED.train),
    test: range(GENERATED.train, GENERATED.test),
    bfcl: range(0, 800),
  },
  // By what the server said at reset (its entry's labels, whichever server it is), else by the index.
  category: (index, info) => servedCategory(info) ?? source().entries[index]?.category ?? "unknown",
  groups: (index, info) =>
    (servedClasses(info) ?? source().entries[index]?.involvedClasses ?? []).map((c) => `class ${c}`),
  label: (index, info) => servedId(info) ?? source().entries[index]?.id,
  setOptions: ["data_dir", "generated_classes", "generated_categories"],
  parseOptions: parseBfclOptions,
  async serve(options, at = { port: 0 }) {
    const o = parseBfclOptions(options);
    served = await bfclSource(o.data_dir ?? undefined, generatedSet(o));
    const server = await serveBfcl({ ...at, source: served, episode: episodeOptions(o) });
    return { ...server, ...(served.about ? { about: served.about } : {}) };
  },
  vocabulary: (prompt) => Promise.resolve(bfclVocabulary(generatedSource(), prompt)),
  oracle: async (index, options) => {
    const o = parseBfclOptions(options);
    return oracleReplies(await bfclSource(o.data_dir ?? undefined, generatedSet(o)), index, o);
  },
  // For a template that reads `tools` (Qwen2.5's), the first observation's documents go there. Held-out functions
  // arriving on a later turn stay in that turn's text: a prompt already sampled from is never rendered again.
  tools: (observation) => splitToolList(observation),
  // The observation and the state the server says the step left (anchor.ts).
  anchor: bfclAnchor,
  synthetic: (options) => {
    const o = parseBfclOptions(options);
    return Promise.resolve(bfclSynthetic(o, episodeOptions(o)));
  },
};
