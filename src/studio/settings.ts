/**
 * The settings the studio page offers: a few keys of the run config, shown with the resolved config's values and
 * turned back into `key=value` overrides, the very ones `deno task train NAME key=value ...` takes, so the page's
 * run and the command line's are one config with one schema (src/config/schema.ts) and the page can show the
 * command that runs the same in Deno.
 */
import type { RunConfig } from "../config/schema.ts";

/** One setting: its config key, its label on the page, and how its text is read. */
export interface Setting {
  key: string;
  label: string;
  /** int: a whole number; number: any number; ints: whole numbers separated by commas (a YAML list). */
  kind: "int" | "number" | "ints";
  /** What it does, shown beside it. */
  help: string;
}

/** The settings, in the page's order. */
export const SETTINGS: readonly Setting[] = [
  { key: "trainer.total_steps", label: "GRPO steps", kind: "int", help: "RL steps after the warm start" },
  { key: "data.train_batch_size", label: "tasks per step", kind: "int", help: "prompts drawn per GRPO step" },
  { key: "rollout.n", label: "group size", kind: "int", help: "episodes per task, compared with each other" },
  { key: "actor.lr", label: "learning rate", kind: "number", help: "GRPO's AdamW learning rate" },
  {
    key: "algorithm.rounds_ctrl.rounds",
    label: "rounds",
    kind: "ints",
    help: "round limits per episode over training (ScalingInter stages)",
  },
  { key: "sft.epochs", label: "warm-start epochs", kind: "number", help: "passes over the oracle's episodes" },
  { key: "trainer.eval_limit", label: "test tasks", kind: "int", help: "test goals of each evaluation (0: all)" },
  { key: "trainer.seed", label: "seed", kind: "int", help: "data order, sampling and augmentation" },
];

/** A config value at a dotted key. */
function at(config: RunConfig, key: string): unknown {
  let v: unknown = config;
  for (const k of key.split(".")) v = (v as Record<string, unknown> | undefined)?.[k];
  return v;
}

/**
 * The text a setting shows for `config`.
 *
 * @example
 * ```ts
 * settingText(config, SETTINGS[4]); // "10, 15, 20"
 * ```
 */
export function settingText(config: RunConfig, s: Setting): string {
  const v = at(config, s.key);
  return Array.isArray(v) ? v.join(", ") : String(v);
}

/** A setting's text as the override's value; throws a RangeError naming the setting when it does not read. */
export function settingValue(s: Setting, text: string): string {
  const t = text.trim();
  const whole = (x: string) => /^-?\d+$/.test(x);
  if (s.kind === "ints") {
    const parts = t.split(/[\s,]+/).filter((x) => x !== "");
    if (parts.length === 0 || !parts.every(whole)) {
      throw new RangeError(`${s.label} must be whole numbers separated by commas (e.g. 10, 15, 20), got "${text}"`);
    }
    return `[${parts.join(", ")}]`;
  }
  if (s.kind === "int" && !whole(t)) throw new RangeError(`${s.label} must be a whole number, got "${text}"`);
  if (s.kind === "number" && (t === "" || !Number.isFinite(Number(t)))) {
    throw new RangeError(`${s.label} must be a number, got "${text}"`);
  }
  return t;
}

/**
 * The overrides of the settings whose text differs from the config's own, in the page's order.
 *
 * @example
 * ```ts
 * overridesFrom(config, { "trainer.total_steps": "2", "rollout.n": "4" }); // ["trainer.total_steps=2"] when n is 4
 * ```
 */
export function overridesFrom(config: RunConfig, texts: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const s of SETTINGS) {
    const text = texts[s.key];
    if (text === undefined) continue;
    const value = settingValue(s, text);
    if (value !== settingValue(s, settingText(config, s))) out.push(`${s.key}=${value}`);
  }
  return out;
}

/**
 * The command that trains the same in Deno: `deno task train NAME` with the overrides, each quoted for a POSIX shell
 * where it needs it.
 *
 * @example
 * ```ts
 * trainCommand("textcraft", ["trainer.total_steps=2", "algorithm.rounds_ctrl.rounds=[5, 10]"]);
 * // deno task train textcraft trainer.total_steps=2 'algorithm.rounds_ctrl.rounds=[5, 10]'
 * ```
 */
export function trainCommand(config: string, overrides: readonly string[]): string {
  const quote = (x: string) => (/^[\w.,=/:@+-]+$/.test(x) ? x : `'${x.replaceAll("'", `'"'"'`)}'`);
  return ["deno task train", quote(config), ...overrides.map(quote)].join(" ");
}
