/**
 * WebShop: find and buy the product an instruction describes, on WebShop's simulated shop in text mode (search, open
 * a product, pick its options, buy; WebShop's partial reward for what was bought). The task's parts, reached by the
 * trainer only through the Task hooks: the embedded server (WebShop's own files from `task_options.data_dir`, else
 * Crucible's generated catalogue), results by product category, the oracle's demonstrations and the tiny model's
 * vocabulary. `--env-url` to AgentGym's own WebShop server plays the same task with the same prompt.
 */
import { webshopAdapter } from "../../src/env/adapters/webshop.ts";
import { type Task, upstreamSuccess } from "../../src/task/task.ts";
import { webShopCardWords } from "./card.ts";
import { generatedSource, webShopSource } from "./data.ts";
import { oracleOptions, parseWebShopOptions } from "./options.ts";
import { WEBSHOP_PROMPT, webShopAction } from "./prompt.ts";
import type { WebShopSource } from "./server.ts";

// The reward's tagger (wink-nlp's model, about 150 ms to load) comes in with the server, the oracle and the vocabulary,
// imported when a hook first needs them, so that commands which never play WebShop do not load it.

export { WEBSHOP_PROMPT, webShopAction };

/** The source the last embedded server serves (WebShop's files once a data directory was served), else generated. */
let served: WebShopSource | undefined;
const source = () => served ?? generatedSource();

/** The category a reset's or the server's labels name, if any. */
function labelCategory(info?: Readonly<Record<string, unknown>>): string | undefined {
  return typeof info?.category === "string" ? info.category : undefined;
}

/** The WebShop task. 6 rounds, as AgentGym's AgentEvol scripts run it (configs set their own). */
export const webshop: Task = {
  name: "webshop",
  adapter: webshopAdapter,
  prompt: WEBSHOP_PROMPT,
  parseAction: (text) => ({ action: webShopAction(text) }),
  isSuccess: upstreamSuccess,
  maxRounds: 6,
  // The generated catalogue's splits (held out by product); a data directory's server publishes WebShop's own.
  get splits() {
    return generatedSource().tasks.splits;
  },
  category: (index, info) => labelCategory(info) ?? source().world.goals[index]?.category ?? "unknown",
  label: (index, info) => (typeof info?.asin === "string" ? info.asin : source().world.goals[index]?.asin),
  parseOptions: parseWebShopOptions,
  async serve(options, at = { port: 0 }) {
    const o = parseWebShopOptions(options);
    served = await webShopSource(o.data_dir, o.goals);
    const { serveWebShop } = await import("./server.ts");
    return { ...await serveWebShop(served, at, { invalidPenalty: o.invalid_penalty }), about: served.tasks.about };
  },
  // The invalid-action penalty is the embedded server's; an external server pays upstream's reward.
  embeddedOnly: (options) => parseWebShopOptions(options).invalid_penalty > 0 ? ["invalid_penalty"] : [],
  vocabulary: async (prompt) => (await import("./vocabulary.ts")).webShopVocabulary(generatedSource().world, prompt),
  oracle: async (index, options) => {
    const o = parseWebShopOptions(options);
    const src = await webShopSource(o.data_dir, o.goals);
    const episode = (await import("./oracle.ts")).oracleEpisode(src.world, index, oracleOptions(o));
    // The page-only oracle (oracle_pick=top) does not solve every goal; it demonstrates only those it solves.
    return o.oracle_pick === "top" && episode.reward !== 1 ? [] : episode.replies;
  },
  augment: async (options) => (await import("./augment.ts")).webShopAugment(parseWebShopOptions(options).rename_asins),
  synthetic: async (options) =>
    (await import("./synthetic.ts")).webShopSynthetic(oracleOptions(parseWebShopOptions(options))),
  baseModelWords: webShopCardWords,
  // The page the agent sees, as verl-agent's GiGPO anchors WebShop: the observation text. The options chosen on an
  // item page are not on it, so an item page before and after picking a size is one anchor.
  anchor: (seen) => seen.observation,
};
