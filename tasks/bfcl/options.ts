/**
 * BFCL's own settings, under `task_options` in a run config (or `--data-dir` on `deno task serve bfcl`). The trainer
 * passes them through unread; this module checks them, so an unknown key or a bad value stops the run with the key.
 */
import { z } from "zod";
import { CALL_FORMATS } from "./calls.ts";
import { CLASS_NAMES } from "./classes/api.ts";
import { GENERATED_CATEGORIES } from "./generator.ts";
import { REWARD_MODES } from "./rewards.ts";

const Schema = z.strictObject({
  /** BFCL's data directory (laid out as bfcl_eval/data/); null serves Crucible's generated tasks. */
  data_dir: z.string().min(1).nullable().default(null),
  /** The classes the generated tasks draw from; null: all eight. */
  generated_classes: z.array(z.enum(CLASS_NAMES as [string, ...string[]])).min(1).nullable().default(null),
  /** The categories the generated tasks cycle through, in this order; null: all four (base, miss_param, ...). */
  generated_categories: z.array(z.enum(GENERATED_CATEGORIES)).min(1).nullable().default(null),
  /** The call form of the oracle's demonstrations (the server reads every form). */
  call_format: z.enum(CALL_FORMATS.filter((f) => f !== "auto") as ["python", "qwen", "tiny", "envtuning"])
    .default("python"),
  /** A reply that does not decode: answered with the error and the turn goes on, or read as the turn's end (BFCL). */
  format_errors: z.enum(["feedback", "end_turn"]).default("feedback"),
  /** Whether a call on a turn with empty ground truth fails the turn (BFCL's irrelevance rule; its v4 runner: off). */
  strict_empty_turns: z.boolean().default(true),
  /** The episode's reward: BFCL's pass (0/1), EnvTuning's stage 1-2 `format` reward (0..2) or stage 3 `progress`. */
  rewards: z.enum(REWARD_MODES).default("pass"),
  /** EnvTuning's augmented feedback: format errors answered with what was wrong; off for its last stage. */
  feedback: z.boolean().default(true),
});

/** BFCL's task options, defaults filled. */
export type BfclOptions = z.infer<typeof Schema>;

/** The generated set the options ask for. */
export function generatedSet(o: BfclOptions): { classes: string[] | null; categories: string[] | null } {
  return { classes: o.generated_classes, categories: o.generated_categories };
}

/** The option keys, for error messages. */
export const BFCL_OPTION_KEYS = Object.keys(Schema.shape);

/** Checks `task_options` for BFCL; errors name the key and the valid keys. */
export function parseBfclOptions(raw: unknown): BfclOptions {
  const r = Schema.safeParse(raw ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (issue.code === "unrecognized_keys") {
    throw new TypeError(
      `Unknown BFCL option "task_options.${issue.keys[0]}"; the options are ${BFCL_OPTION_KEYS.join(", ")}`,
    );
  }
  throw new TypeError(`BFCL option "task_options.${issue.path.join(".")}": ${issue.message}`);
}
