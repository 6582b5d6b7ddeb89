/**
 * What the learner accepts from the trajectory stream: every message is checked here before it can enter a batch,
 * and a message that fails is refused with one reason, in this order (the first that applies):
 *
 * - `worker` (first): sent on the subject of a worker the learner dropped, which is not even read;
 * - `size`: more bytes than `cluster.max_message_bytes`;
 * - `unreadable`: not JSON;
 * - `schema`: not a played group's shape (zod; every number finite, since JSON has no NaN, an `Infinity` written as
 *   1e999 or a NaN sent as null fails here, under the field's own reason below where it has one);
 * - `run`: another run's (a worker still playing a run that ended; not the sender's fault);
 * - `worker`: its `worker` is not the name its subject gives (with credentials the server lets a worker publish on
 *   its own subject alone);
 * - `prompt`: not an answer to a prompt this learner published: its id, step, group, task and seeds must be the
 *   prompt's, one episode per seed;
 * - `version`: sampled by a policy version this learner has not published (a future one), or episodes that
 *   disagree with the group's version;
 * - `token_ids`: an id that is not an integer in [0, vocabulary size);
 * - `lengths`: a prompt or response past the prompt's limits, more rounds than it allows, or masks and log-probs not
 *   as long as the response;
 * - `masks`: a mask value other than 0 or 1;
 * - `logprobs`: a sampled token's log-probability above 0 (no probability exceeds 1), or an observation token's not 0;
 * - `reward`: a reward outside the task's range (Task.rewardRange), or missing where the episode did not fail;
 * - `id`: its stream message id is not its sender's name and its bytes' SHA-256 (messages.ts groupMessageId): a
 *   message that could take another's place in the stream's de-duplication, or one no worker of ours sent;
 * - `duplicate`: a group the learner already has or trained on (a replayed message, or a redelivered prompt played
 *   twice; not the sender's fault). Checked last, so that what is wrong with a forgery names it however late it
 *   comes.
 *
 * Every reason but `run` and `duplicate` is the sender's fault, and the sender is the worker whose subject the message
 * came on: with credentials only that worker's (or the learner's) could have put it there (auth.ts).
 *
 * A version more than rollout.max_staleness behind is not refused here: the learner drops it as stale and plays the
 * prompt again (learner.ts). What this cannot see: a well-formed group that a worker holding valid credentials made
 * up (docs/security.md).
 */
import { z } from "zod";
import { WORKER_NAME } from "./credentials.ts";
import { type GroupMessage, groupMessageId, type PromptMessage } from "./messages.ts";
import type { Trajectory, TurnRecord } from "../rollout/trajectory.ts";

/** Why a message was refused. */
export const REASONS = [
  "size",
  "unreadable",
  "schema",
  "run",
  "worker",
  "prompt",
  "version",
  "token_ids",
  "lengths",
  "masks",
  "logprobs",
  "reward",
  "id",
  "duplicate",
] as const;
/** One of {@linkcode REASONS}. */
export type Reason = typeof REASONS[number];

/** Reasons that are not the sender's fault, which never count toward dropping it. */
export const INNOCENT: ReadonlySet<Reason> = new Set(["run", "duplicate"]);

/** What the learner knows to check a message against. */
export interface AdmitContext {
  runId: string;
  vocabSize: number;
  rewardRange: readonly [number, number];
  maxBytes: number;
  /** The prompt published for (step, group) and every id it was published under (replays), if any. */
  prompt(step: number, group: number): { message: PromptMessage; ids: ReadonlySet<string> } | undefined;
  /** Whether this learner published policy version `v`. */
  published(v: number): boolean;
  /** Whether the group of (step, group) or prompt id `id` is in hand or trained on already. */
  seen(step: number, group: number, id: string): boolean;
  /** Whether the learner dropped worker `name`. */
  dropped(name: string): boolean;
}

/** A message as the trajectory stream delivers it: its bytes, its subject and its message id (absent: none). */
export interface StreamMessage {
  data: Uint8Array;
  /** `crucible.trajectories.NAME`. */
  subject: string;
  /** The `Nats-Msg-Id` it was published with. */
  id: string | undefined;
}

/** A message let in, or refused with its reason and what was wrong. */
export type Verdict =
  | { ok: true; group: GroupMessage }
  | { ok: false; reason: Reason; detail: string; worker: string };

const num = z.number();
// Strict: a field the learner does not know is refused, not passed on to the trainer and the logs unread.
const TrajectorySchema = z.strictObject({
  task: z.number().int(),
  group: z.number().int(),
  seed: z.number().int(),
  promptIds: z.array(num),
  responseIds: z.array(num),
  mask: z.array(num),
  logprobs: z.array(num),
  reward: num.nullable(),
  success: z.boolean(),
  rounds: z.number().int().nonnegative(),
  finish: z.enum(["done", "max_rounds", "length", "env_failure", "prompt_overflow"]),
  firstObservation: z.string(),
  turns: z.array(
    z.strictObject({
      text: z.string(),
      action: z.string().nullable(),
      observation: z.string(),
      reward: num,
      anchor: z.string(),
    }),
  ),
  taskInfo: z.record(z.string(), z.unknown()).optional(),
  error: z.string().optional(),
  version: z.number().int().optional(),
});
const GroupSchema = z.strictObject({
  run: z.string(),
  id: z.string(),
  step: z.number().int().positive(),
  group: z.number().int().nonnegative(),
  version: z.number().int().nonnegative(),
  worker: z.string(),
  deliveries: z.number().int().positive(),
  seconds: z.strictObject({ play: num, prefill: num, decode: num, env: num }),
  trajectories: z.array(TrajectorySchema),
});

// Every field a worker sends is one the schema knows (a field added to Trajectory must be added above, or every
// group would be refused): a compile-time check.
const known: [Exclude<keyof Trajectory, keyof z.infer<typeof TrajectorySchema>>] extends [never] ? true : false = true;
const knownGroup: [Exclude<keyof GroupMessage, keyof z.infer<typeof GroupSchema>>] extends [never] ? true : false =
  true;
type TurnFields = keyof z.infer<typeof TrajectorySchema>["turns"][number];
const knownTurn: [Exclude<keyof TurnRecord, TurnFields>] extends [never] ? true : false = true;
void known, knownGroup, knownTurn;

/** The reason a schema problem at `path` falls under: the field's own where it has one. */
function schemaReason(path: readonly PropertyKey[]): Reason {
  const field = path[0] === "trajectories" ? path[2] : undefined;
  if (field === "promptIds" || field === "responseIds") return "token_ids";
  if (field === "mask") return "masks";
  if (field === "logprobs") return "logprobs";
  if (field === "reward") return "reward";
  return "schema";
}

/** Checks one message of the trajectory stream; see the module header. */
export function admit(message: StreamMessage, ctx: AdmitContext): Verdict {
  const { data: bytes, subject } = message;
  const sender = subject.slice(subject.lastIndexOf(".") + 1);
  const no = (reason: Reason, detail: string): Verdict => ({ ok: false, reason, detail, worker: sender });
  // A dropped worker's messages are not even read.
  if (ctx.dropped(sender)) return no("worker", `worker ${sender} was dropped for its bad messages`);
  if (bytes.length > ctx.maxBytes) return no("size", `${bytes.length} bytes, past the limit of ${ctx.maxBytes}`);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    return no("unreadable", `not JSON (${(e as Error).message.slice(0, 80)})`);
  }
  const parsed = GroupSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return no(schemaReason(issue.path), `${issue.path.join(".") || "the message"}: ${issue.message}`);
  }
  const g = parsed.data as GroupMessage;
  if (g.run !== ctx.runId) return no("run", `of run ${g.run.slice(0, 36)}, not this one`);
  if (g.worker !== sender || !WORKER_NAME.test(sender)) {
    return no("worker", `says it is from ${JSON.stringify(g.worker).slice(0, 70)}, but came on ${sender}'s subject`);
  }
  const p = ctx.prompt(g.step, g.group);
  const problem = p ? promptProblem(g, p.message, p.ids) : `step ${g.step} has no group ${g.group} published`;
  if (problem) return no("prompt", problem);
  if (!ctx.published(g.version)) return no("version", `version ${g.version} was never published by this learner`);
  const mixed = g.trajectories.find((t) => t.version !== undefined && t.version !== g.version);
  if (mixed) return no("version", `an episode says version ${mixed.version}, the group ${g.version}`);
  const limits = p!.message.options;
  for (const [i, t] of g.trajectories.entries()) {
    const bad = episodeProblem(t, { ...ctx, limits });
    if (bad) return no(bad[0], `episode ${i}: ${bad[1]}`);
  }
  const id = groupMessageId(sender, bytes);
  if (message.id !== id) {
    return no("id", `message id ${JSON.stringify(message.id ?? null).slice(0, 80)}, not ${sender}-SHA256 of its bytes`);
  }
  if (ctx.seen(g.step, g.group, g.id)) return no("duplicate", `step ${g.step} group ${g.group} is in hand already`);
  return { ok: true, group: g };
}

function promptProblem(g: GroupMessage, p: PromptMessage, ids: ReadonlySet<string>): string | undefined {
  if (!ids.has(g.id)) return `id ${JSON.stringify(g.id).slice(0, 70)} is not one step ${g.step} group ${g.group} had`;
  if (g.trajectories.length !== p.seeds.length) {
    return `${g.trajectories.length} episodes for the prompt's ${p.seeds.length} seeds`;
  }
  const seeds = g.trajectories.map((t) => t.seed).sort((a, b) => a - b).join();
  if (seeds !== [...p.seeds].sort((a, b) => a - b).join()) return "seeds other than the prompt's";
  const other = g.trajectories.find((t) => t.task !== p.task || t.group !== g.group);
  if (other) return `an episode of task ${other.task}, group ${other.group}; the prompt is task ${p.task}`;
  return undefined;
}

type Limits = PromptMessage["options"];

function episodeProblem(
  t: GroupMessage["trajectories"][number],
  c: { vocabSize: number; rewardRange: readonly [number, number]; limits: Limits },
): [Reason, string] | undefined {
  const ids = [...t.promptIds, ...t.responseIds];
  const badId = ids.find((id) => !Number.isInteger(id) || id < 0 || id >= c.vocabSize);
  if (badId !== undefined) return ["token_ids", `token id ${badId} is not in [0, ${c.vocabSize})`];
  const n = t.responseIds.length, l = c.limits;
  if (t.promptIds.length > l.maxPromptLength) {
    return ["lengths", `a prompt of ${t.promptIds.length} tokens, past ${l.maxPromptLength}`];
  }
  if (n > l.maxResponseLength) return ["lengths", `a response of ${n} tokens, past ${l.maxResponseLength}`];
  if (t.mask.length !== n || t.logprobs.length !== n) {
    return ["lengths", `${n} response tokens, ${t.mask.length} mask values, ${t.logprobs.length} log-probs`];
  }
  if (t.rounds > l.maxRounds || t.turns.length > t.rounds) {
    return ["lengths", `${t.rounds} rounds and ${t.turns.length} turns, of at most ${l.maxRounds}`];
  }
  const badMask = t.mask.find((m) => m !== 0 && m !== 1);
  if (badMask !== undefined) return ["masks", `mask value ${badMask}`];
  for (let j = 0; j < n; j++) {
    const lp = t.logprobs[j];
    if (t.mask[j] === 1 ? lp > 0 : lp !== 0) {
      return ["logprobs", `log-prob ${lp} of ${t.mask[j] === 1 ? "a sampled" : "an observation"} token ${j}`];
    }
  }
  const [lo, hi] = c.rewardRange;
  const failed = t.finish === "env_failure" || t.finish === "prompt_overflow";
  if (t.reward === null ? !failed : t.reward < lo || t.reward > hi) {
    return ["reward", `reward ${t.reward}${t.reward === null ? "" : `, outside the task's [${lo}, ${hi}]`}`];
  }
  return undefined;
}
