/**
 * WebShop's own settings, under `task_options` in a run config (`--data-dir` on `deno task serve webshop`). The
 * trainer passes them through unread; this module checks them, so an unknown key or a bad value stops the run with
 * the key.
 */
import { z } from "zod";
import type { OracleOptions } from "./oracle.ts";

const Schema = z.strictObject({
  /** WebShop's data/ folder (items_shuffle_1000.json, items_ins_v2_1000.json, items_human_ins.json); null: generated. */
  data_dir: z.string().min(1).nullable().default(null),
  /** With data_dir: human goals (items_human_ins.json), synthetic ones, or human when that file is there. */
  goals: z.enum(["auto", "human", "synthetic"]).default("auto"),
  /** The oracle's replies: AgentGym's "Thought: ... Action: ..." (react), or the action line alone (action). */
  reply_format: z.enum(["react", "action"]).default("react"),
  /**
   * Which product the oracle opens after its search: the goal's own, found by its asin (target), or the first result
   * (top), so that its demonstrations choose only from what the page shows.
   */
  oracle_pick: z.enum(["target", "top"]).default("target"),
  /**
   * The share of SFT episodes whose asins are renamed each epoch (augment.ts), so that a model copies the asin a page
   * shows instead of remembering a training product's.
   */
  rename_asins: z.number().min(0).max(1).default(0),
  /** What the oracle searches for: the instruction's product words (words), or the whole instruction (instruction). */
  oracle_search: z.enum(["words", "instruction"]).default("words"),
  /**
   * p: what each action the page does not offer (a click on an asin not shown, a malformed action) takes from the
   * episode's score on the embedded server, for RL (server.ts). 0 (the default) pays WebShop's own reward; a purchase
   * always scores WebShop's own reward, and the evaluation never sees the penalty.
   */
  invalid_penalty: z.number().min(0).lt(1).default(0),
});

/** WebShop's task options, defaults filled. */
export type WebShopOptions = z.infer<typeof Schema>;

/** How the oracle plays under these options: its replies' form, its search and the product it opens. */
export function oracleOptions(o: WebShopOptions): OracleOptions {
  return { format: o.reply_format, pick: o.oracle_pick, search: o.oracle_search };
}

/** The option keys, for error messages. */
export const WEBSHOP_OPTION_KEYS = Object.keys(Schema.shape);

/** Checks `task_options` for WebShop; errors name the key and the valid keys. */
export function parseWebShopOptions(raw: unknown): WebShopOptions {
  const r = Schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue.code === "unrecognized_keys") {
    throw new TypeError(
      `Unknown WebShop option "task_options.${issue.keys[0]}"; the options are ${WEBSHOP_OPTION_KEYS.join(", ")}`,
    );
  }
  throw new TypeError(`WebShop option "task_options.${issue.path.join(".")}": ${issue.message}`);
}
