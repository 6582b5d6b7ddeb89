/**
 * The types a run passes around, in one module that imports nothing else of src/train but two leaves (the run log
 * and the evaluation's result), so the run's modules import it and never each other in a circle: run.ts starts a
 * `Run`, phases.ts drives it, setup.ts, checkpoint.ts and lora.ts fill and save its parts.
 */
import type { LearnerName, RunConfig } from "../config/schema.ts";
import type { TaskSet } from "../env/adapter.ts";
import type { EnvClient } from "../env/client.ts";
import type { ModelConfig } from "../model/config.ts";
import type { LoraSettings } from "../model/lora.ts";
import type { SaveDType } from "../model/safetensors.ts";
import type { Tokenizer } from "../model/tokenizer.ts";
import type { StalenessRule } from "../rl/off_policy.ts";
import type { DataPosition } from "../rl/prompts.ts";
import type { EpisodeSpec, RolloutContext, RolloutOptions } from "../rollout/agent.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import type { EmbeddedServer, RlWorlds, Task, TaskOptions } from "../task/task.ts";
import type { Critic } from "../update/critic.ts";
import type { Learner } from "../update/learner.ts";
import type { AdamW } from "../update/optimizer.ts";
import type { EvalResult } from "./eval.ts";
import type { RunLog } from "./metrics.ts";
import type { ExpertEpisode, TextPair } from "./preferences.ts";

/** Progress reporting, implemented by the command line. */
export interface Reporter {
  /** A progress bar for `total` units of a phase. */
  bar(label: string, total: number): { tick(n?: number, note?: string): void; done(note?: string): void };
  /** One line of text. */
  line(text: string): void;
}

/** Everything the phases of one run share. */
export interface Run {
  config: RunConfig;
  dir: string;
  rep: Reporter;
  log: RunLog;
  stopRequested: () => boolean;
  env: RunEnv;
  host: HostModel;
  learner: Learner;
  /** The trainer's state, saved with every checkpoint. */
  state: TrainerState;
  /** The checkpoint a resumed run started from (its state as loaded, never the live one). */
  resumed?: LoadedCheckpoint;
  rollout: RolloutContext;
  /** rollout.max_staleness's rule, resolved once (src/rl/off_policy.ts): what every part of the run bounds by. */
  staleness: StalenessRule;
  /** Where RL steps play their episodes, when not in this process. */
  source?: RolloutSource;
  /** PPO's critic, once the RL phase made one (algorithm.adv_estimator=gae). */
  critic?: Critic;
  train: number[];
  /** The tasks the servers said they hold (GET /tasks), where they said. */
  served?: TaskSet;
  /** The test tasks evaluated (the first trainer.eval_limit of the split when set) and the split's size. */
  evalSet: number[];
  testTasks: number;
  lastCheckpoint?: string;
  /** Files the config names that the run read whole before writing anything: preference pairs, expert episodes. */
  inputs: RunInputs;
  /** Saves a checkpoint of the learner (the optimizer's moments and more JSON files when given) and remembers it. */
  save(opt: AdamW | undefined, name: string, files?: Record<string, unknown>): Promise<string>;
  /** Evaluates the test tasks and logs the result. */
  evaluate(phase: string, step: number): Promise<EvalResult>;
}

/** What a run read from the files its config names before its folder was written to. */
export interface RunInputs {
  /** data.preferences: the pairs DPO trains on. */
  preferences?: TextPair[];
  /** eto.expert as a file: the expert's episode of each task it holds, by task index. */
  experts?: Map<number, ExpertEpisode>;
}

/** The environment side of a run. */
export interface RunEnv {
  /** The task, with the run's prompt. */
  task: Task;
  /** The task's checked options (config task_options). */
  options: TaskOptions;
  client: EnvClient;
  /**
   * The client the evaluations play through: `client` itself, or one to a second embedded server that pays the
   * environment's own rule where the run's pays shaped rewards or penalties (Task.embeddedOnly).
   */
  evalClient: EnvClient;
  /** The embedded server, when the run started one. */
  server?: EmbeddedServer;
  /** The task's synthetic RL worlds, which the embedded server plays beside its tasks (data.synthetic_prompts). */
  worlds?: RlWorlds;
  close(): Promise<void>;
}

/** A model's host-side parts. */
export interface HostModel {
  config: ModelConfig;
  /** The dtype its weights were stored in. */
  dtype: SaveDType;
  tensors: Map<string, Float32Array>;
  tokenizer: Tokenizer;
  stopIds: number[];
  /** Where it came from, for the run log. */
  source: string;
}

/** What the trainer needs to continue exactly where it stopped. */
export interface TrainerState {
  version: 1;
  /**
   * "sft" while warm-starting, then the learner's phase (LEARNER_PHASE: "rl", or "dpo" and "agentevol" in rounds);
   * "pretrain" in a pretraining run.
   */
  phase: "sft" | "rl" | "dpo" | "agentevol" | "pretrain";
  /** Optimizer steps of the SFT phase (or of pretraining) done. */
  sftStep: number;
  /** RL training steps done. */
  rlStep: number;
  /** AdamW's applied-update count (bias correction). */
  optimizerStep: number;
  /** Position in the shuffled training data: epoch and offset (and per category, under signal sampling). */
  data: DataPosition;
  /** The reference model's directory (frozen copy for the KL), relative to the run folder. */
  reference: string | null;
  /** Anything else worth keeping (evaluation history, timings). */
  notes: Record<string, unknown>;
  /**
   * The learners in rounds (DPO, ETO, AgentEvol): the round in progress (from 1), optimizer steps done in it, and
   * optimizer steps over all rounds before it. Absent before the first round.
   */
  round?: { index: number; step: number; steps: number };
  /**
   * Prompts drawn for later steps whose episodes were published or played ahead (rollout.max_staleness > 0), by
   * step: a resumed run plays these, not the next ones of its data position. Absent when nothing is ahead.
   */
  ahead?: Record<string, number[]>;
}

/** The trainer-state phase of each learner after the warm start. */
export const LEARNER_PHASE: Readonly<Record<LearnerName, "rl" | "dpo" | "agentevol">> = {
  rl: "rl",
  dpo: "dpo",
  eto: "dpo",
  agentevol: "agentevol",
};

/** A checkpoint read back. */
export interface LoadedCheckpoint {
  dir: string;
  config: ModelConfig;
  dtype: SaveDType;
  tensors: Map<string, Float32Array>;
  tokenizer?: Tokenizer;
  state: TrainerState;
  /** Moments by parameter name, when the checkpoint has optimizer state. */
  moments?: Moments;
  /** PPO's critic, when the run has one: its weights by name and its optimizer's moments. */
  critic?: { tensors: Map<string, Float32Array>; moments?: Moments };
  /** A LoRA run's adapter (then config, dtype, tensors and tokenizer are the base's, as `base` loaded them). */
  adapter?: ResumedAdapter;
}

/** An optimizer's moments by parameter name. */
export interface Moments {
  m: Map<string, Float32Array>;
  v: Map<string, Float32Array>;
}

/** A resumed checkpoint's LoRA adapter (checkpoint.ts reads it, lora.ts starts the learner from it). */
export interface ResumedAdapter {
  settings: LoraSettings;
  tensors: Map<string, Float32Array>;
}

/**
 * Plays a step's episodes somewhere else (a cluster's workers, the one-step-off sampler): every episode of `specs`,
 * each group whole, sampled by a policy version the run's staleness rule allows at step `step` (Run.staleness).
 */
export interface RolloutSource {
  /** Plays step `step`'s episodes and resolves when all are back. */
  play(step: number, specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<PlayedStep>;
  /** Publishes a later step's episodes ahead of its play (rollout.max_staleness > 0): they play during updates. */
  prepare?(step: number, specs: readonly EpisodeSpec[], o: RolloutOptions): Promise<void>;
  /** Steps whose episodes `prepare` takes ahead; default the staleness rule's k. */
  readonly ahead?: number;
  /** Files a checkpoint keeps for the source (episodes played ahead), by name; may wait for them. */
  checkpoint?(): Promise<Record<string, unknown> | undefined>;
  /** Ends the source's connections. */
  close?(): Promise<void>;
}

/** What a rollout source played for one step. */
export interface PlayedStep {
  /** The episodes played, each with the policy version that sampled it. */
  trajectories: Trajectory[];
  /** Sampling time on the workers, summed (prefill, decode) and their environment time. */
  seconds: { prefill: number; decode: number; env: number };
  /** The source's own numbers (waiting, queue depth, drops), added to the step's metrics. */
  metrics: Record<string, number>;
}

/** Options of runTraining (run.ts). */
export interface RunOptions {
  /** The resolved run configuration. */
  config: RunConfig;
  /** The run folder (created; a resumed run's must exist). */
  runDir: string;
  /** Continue from the folder's latest checkpoint. */
  resume: boolean;
  /** Progress bars and lines. */
  reporter: Reporter;
  /** Polled between steps: true asks the run to save and stop. */
  stopRequested: () => boolean;
  /** Resume even when the checkpoint's optimizer state is missing, with fresh moments. */
  freshOptimizer?: boolean;
  /**
   * Play the task's embedded game in this process (its server's handler, called with no HTTP) rather than on a
   * server: the studio page, where nothing can listen.
   */
  inProcessEnv?: boolean;
  /**
   * Where RL plays its episodes (train --cluster), made once the run's learner exists; default this process.
   *
   * @ignore
   */
  source?: (run: Run) => Promise<RolloutSource>;
}

/** What a run reports at the end. */
export interface RunSummary {
  /** The run folder. */
  runDir: string;
  /** Whether a stop request ended the run before its last step (a checkpoint was saved). */
  interrupted: boolean;
  /** The evaluation after the SFT warm start, when there was one. */
  sftEval?: EvalResult;
  /** The final evaluation, when the run finished. */
  finalEval?: EvalResult;
  /** Wall time of this session. */
  seconds: number;
  /** The latest checkpoint's folder. */
  lastCheckpoint?: string;
}
