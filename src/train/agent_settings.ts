/**
 * What a checkpoint's agent was trained with, kept beside its weights as `crucible.json`: the task, the prompt
 * turns, the task's options (TextCraft: the reply layout), the round and length limits, the evaluation
 * temperature and the KV cache's element type. `deno task eval` plays a checkpoint with these unless told otherwise,
 * so the same weights score the same anywhere; `deno task train` starts from a base model's prompt and options
 * unless its config sets its own.
 */
import { z } from "zod";
import { KV_CACHE_SETTINGS, type RunConfig } from "../config/schema.ts";
import type { Task, TaskOptions } from "../task/task.ts";

/** The file name in a model directory. */
export const AGENT_FILE = "crucible.json";

const Settings = z.object({
  version: z.literal(1),
  task: z.string(),
  prompt: z.object({ user: z.string(), assistant: z.string() }),
  task_options: z.record(z.string(), z.unknown()),
  max_rounds: z.number().int().positive(),
  max_tokens_per_turn: z.number().int().positive(),
  max_prompt_length: z.number().int().positive(),
  max_response_length: z.number().int().positive(),
  temperature: z.number().min(0),
  /** The KV cache's element type setting; absent in checkpoints from before it existed, which used f32. */
  kv_cache: z.enum(KV_CACHE_SETTINGS).optional(),
});

/** A checkpoint's agent settings. */
export type AgentSettings = z.infer<typeof Settings>;

/** The settings a run's agent is trained and evaluated with. */
export function agentSettings(c: RunConfig, task: Task, options: TaskOptions): AgentSettings {
  return {
    version: 1,
    task: task.name,
    prompt: { user: task.prompt.user, assistant: task.prompt.assistant },
    task_options: { ...options },
    max_rounds: task.maxRounds,
    max_tokens_per_turn: c.rollout.max_tokens_per_turn,
    max_prompt_length: c.rollout.max_prompt_length,
    max_response_length: c.rollout.max_response_length,
    temperature: c.trainer.eval_temperature,
    kv_cache: c.rollout.kv_cache,
  };
}

/** A model directory's agent settings, or undefined when it has none (any Hugging Face model). */
export async function readAgentSettings(dir: string): Promise<AgentSettings | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(`${dir}/${AGENT_FILE}`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`${dir}/${AGENT_FILE} is not JSON: ${(e as Error).message}`);
  }
  const r = Settings.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new SyntaxError(`${dir}/${AGENT_FILE}: "${issue.path.join(".")}" ${issue.message.toLowerCase()}`);
  }
  return r.data;
}

/**
 * The task set checkpoints were trained on: the values their crucible.json gives the task's `setOptions` (BFCL: the
 * data directory, the generated classes and categories), less the keys in `given` (a `--task-option` says
 * otherwise) and less unset (null) ones. Checkpoints of the task that disagree on a key throw, naming the key, both
 * values and the flag that settles it; settings of another task are ignored.
 *
 * @example
 * ```ts
 * trainedTaskSet(getTask("bfcl"), [await readAgentSettings("models/bfcl-base")], new Set());
 * // { generated_classes: ["GorillaFileSystem", "MathAPI", "TwitterAPI", "TicketAPI"], generated_categories: [...] }
 * ```
 */
export function trainedTaskSet(
  task: Pick<Task, "name" | "setOptions">,
  agents: readonly (AgentSettings | undefined)[],
  given: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of task.setOptions ?? []) {
    if (given.has(key)) continue;
    const values = agents.filter((a) => a?.task === task.name).map((a) => a!.task_options[key] ?? null);
    const texts = [...new Set(values.map((x) => JSON.stringify(x)))];
    if (texts.length > 1) {
      throw new RangeError(
        `The checkpoints were trained on different ${task.name} task sets: task_options.${key} is ${
          texts.join(" in one and ")
        } in another; choose one with --task-option ${key}=VALUE`,
      );
    }
    if (values.length && values[0] !== null) out[key] = values[0];
  }
  return out;
}
