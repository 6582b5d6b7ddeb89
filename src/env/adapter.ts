/**
 * What an adapter is: the small table of differences between AgentGym servers — the id field,
 * the reset argument, the response shapes, and whether a close route exists — written as five functions over a
 * `Call` bound to the one server that holds the environment.
 */
import type { z } from "zod";
import type { Payload } from "./http.ts";

/** An environment id on its server: an int for every AgentGym server. */
export type EnvId = number;

/** One step's outcome as the episode sees it. `reward` is the adapter's reward (BabyAI and SciWorld: the score). */
export interface StepResult {
  /** What the environment says after the action. */
  observation: string;
  /** The step's reward (the task decides what counts as success). */
  reward: number;
  /** Whether the episode has ended. */
  done: boolean;
  /** What the server said beyond AgentGym's fields, where its adapter keeps it (Crucible's BFCL server's `info`). */
  info?: Record<string, unknown>;
}

/**
 * A reset's answer: the first observation, and what the server said about the task it loaded (Crucible's BFCL server:
 * `{id, category, involved_classes}`), where it says something.
 */
export interface ResetReply {
  /** The first observation of the task the environment was reset to. */
  observation: string;
  /**
   * What the server said about the task beyond AgentGym's fields (Crucible's BFCL server: its id, category and
   * classes).
   */
  info?: Record<string, unknown>;
}

/** The tasks a server says it holds (Crucible's servers' `GET /tasks`): a reset's index is taken mod `count`. */
export interface TaskSet {
  /** How many tasks the server holds (indices 0 to count − 1). */
  count: number;
  /** Named splits of task indices the server publishes. */
  splits?: Record<string, number[]>;
  /** What the tasks are, in a line ("BFCL's files from DIR: 800 entries ..."). */
  about?: string;
  /**
   * Each task's labels by index (`count` of them), the `info` a reset to it answers (Crucible's BFCL server: the
   * entry's id, category and involved classes): what a task's hooks read of a task no episode has played yet.
   */
  labels?: readonly Readonly<Record<string, unknown>>[];
}

/**
 * Sends one request to the environment's server and validates the answer.
 *
 * @ignore
 */
export type Call = <T>(method: "GET" | "POST", path: string, schema: z.ZodType<T>, payload?: Payload) => Promise<T>;

/** One server's protocol. */
export interface Adapter {
  /** The environment's name, e.g. `textcraft`. */
  readonly name: string;
  /** Creates an environment; some servers also answer with its first observation. */
  create(call: Call): Promise<{ id: EnvId; observation?: string }>;
  /** Resets to task `index` and returns the observation the agent sees first (and the task's info, where given). */
  reset(call: Call, id: EnvId, index: number): Promise<string | ResetReply>;
  /** Sends one action. */
  step(call: Call, id: EnvId, action: string): Promise<StepResult>;
  /** Asks the server for the current observation; absent when the client keeps the last one (TextCraft, BabyAI). */
  observe?(call: Call, id: EnvId): Promise<string>;
  /** Releases the environment; absent when the server has no close route (closing is then local). */
  close?(call: Call, id: EnvId): Promise<void>;
  /** Asks which tasks the server holds; absent where the protocol has no such route (upstream's servers). */
  tasks?(call: Call): Promise<TaskSet>;
}
