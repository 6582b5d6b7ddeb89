/**
 * Crucible as a library: multi-turn RL for LLM agents on WebGPU. Five groups, each with an example that runs
 * (tests/mod_test.ts runs every example of this file). Internals (buffer pools, dispatch grids, uniform layouts,
 * kernel variant tables) stay inside; the command line (`deno task ...`) is the other way in.
 *
 * ## Runtime and kernels
 *
 * A device, tensors, batches of dispatches with explicit readbacks, and the transformer's kernels, each with its
 * forward and backward. A matrix past the adapter's binding limit is held in row parts (`SplitTensor`), which the
 * embedding and matmul kernels read part by part.
 *
 * ```ts
 * import { Batch, fromHost, getGpu, matmul, zeros } from "./mod.ts";
 * const gpu = await getGpu();
 * const a = fromHost(gpu, [1, 2, 3, 4], [2, 2]);
 * const c = zeros(gpu, [2, 2]);
 * const batch = new Batch(gpu);
 * matmul(batch, { a, b: a, out: c });
 * const [values] = await batch.read([c]); // [7, 10, 15, 22]
 * ```
 *
 * ## Model and tokenizers
 *
 * Qwen2, Qwen2.5, Qwen3 and Llama configs, Hugging Face directories in and out, tokenizers and chat templates,
 * the packed forward and backward, and KV-cached generation.
 *
 * ```ts
 * import { buildTinyModel, Generator, getGpu, Transformer } from "./mod.ts";
 * const tiny = buildTinyModel(["craft 4 oak planks using 1 oak logs"]);
 * const model = Transformer.fromHost(await getGpu(), tiny.config, tiny.tensors);
 * const generator = new Generator(model, { slots: 1, maxLen: 64 });
 * const seq = generator.open(tiny.tokenizer.encode("craft 4"), 1);
 * const [out] = await generator.decode([seq], [{ maxNewTokens: 4, stopIds: [] }], { temperature: 0 });
 * out.ids.length; // 4
 * out.finish; // "max_tokens"
 * ```
 *
 * ## Environments and tasks
 *
 * AgentGym's servers behind one async client, Crucible's own TextCraft server, and tasks (prompt, action parser,
 * success rule, splits, and training aids such as TextCraft's oracle and synthetic worlds).
 *
 * ```ts
 * import { envClient, getTask, serveTextCraft } from "./mod.ts";
 * const server = await serveTextCraft({ port: 0 });
 * const client = envClient("textcraft", { urls: [server.url] });
 * const env = await client.create({ parseAction: getTask("textcraft").parseAction });
 * const first = await env.reset(0);
 * const { observation } = await env.step("Action: get 1 acacia logs"); // "Got 1 acacia logs"
 * await env.close();
 * client.close();
 * await server.shutdown();
 * ```
 *
 * ## RL math
 *
 * Advantages (GRPO, RLOO, REINFORCE++, GAE, GiGPO's credit for each turn), loss aggregation, KL estimators, the clipped surrogate and the whole
 * policy objective, the value loss, TRL's DPO losses and the ScalingInter round schedule, on plain arrays. The advantage estimators
 * policy losses and KL estimators a config names are registered by name (`ADVANTAGE_ESTIMATORS`, `POLICY_LOSSES`,
 * `KL_ESTIMATORS`): register one and `algorithm.adv_estimator`, `actor.policy_loss` or `actor.kl_loss_type` accepts
 * it (docs/extending-rl.md).
 *
 * ```ts
 * import { advantageEstimator, aggregateLoss, dpoLoss, gigpoAdvantages, grpoAdvantages, klPenalty, roundsAt } from "./mod.ts";
 * grpoAdvantages([1, 0, 1, 1], [0, 0, 1, 1]); // [0.707, -0.707, 0, 0]
 * const turns = (reward: number) => [{ anchor: "start", reward: 0 }, { anchor: `after ${reward}`, reward }];
 * const episodes = [{ group: 0, score: 1, turns: turns(1) }, { group: 0, score: 0, turns: turns(0) }];
 * gigpoAdvantages(episodes).turns; // [[0.975, 0.5], [-0.975, -0.5]]
 * advantageEstimator("reinforce_plus_plus").keys; // ["algorithm.gamma"]
 * klPenalty([-1.5], [-1], "low_var_kl"); // [0.1487]
 * aggregateLoss([[1, 3], [2]], [[1, 1], [1]], "token-mean"); // 2
 * roundsAt({ type: "scaling_inter", rounds: [10, 20, 30], stepsPerStage: 100 }, 150); // 20
 * dpoLoss({ chosen: [-10], rejected: [-12], refChosen: [-11], refRejected: [-11] }).losses; // [0.5981]
 * ```
 *
 * ## Training
 *
 * Configs, multi-turn rollouts, one RL step, evaluation, whole runs (pretraining, SFT then RL) and their reports.
 *
 * ```ts
 * import { resolveConfig } from "./mod.ts";
 * const config = resolveConfig({ text: "task: textcraft\n", name: "example.yaml" }, ["actor.lr=1e-5"]);
 * config.algorithm.adv_estimator; // "grpo"
 * ```
 *
 * @module
 */

// Runtime and kernels.
export {
  getGpu,
  type Gpu,
  type GpuFeatures,
  type GpuOptions,
  hasAdapter,
  requestGpu,
  withTensorLimit,
} from "./src/gpu/device.ts";
export { readStored, type RowPart, rowParts, SplitTensor, type StoredTensor } from "./src/gpu/split.ts";
export { Batch, type Dispatch, type DispatchTimer, type Grid } from "./src/gpu/batch.ts";
export { type Kernel, kernel, type KernelOptions, type Shader } from "./src/gpu/pipeline.ts";
export { type DType, empty, fromHost, type HostArray, type HostData, Tensor, write, zeros } from "./src/gpu/tensor.ts";
export { GpuTimer, type Timing } from "./src/gpu/timing.ts";
export type { TuneChoice, TuneMode } from "./src/gpu/tuner.ts";
export type { ScalarType, UniformLayout } from "./src/gpu/uniforms.ts";
export { Rng } from "./src/util/random.ts";
export { biasGrad, matmul, type MatmulArgs, pickMatmulVariant, tuneMatmul } from "./src/ops/matmul.ts";
export type { MatmulShape } from "./src/ops/matmul_variants.ts";
export { embeddingBackward, type EmbeddingBuckets, embeddingForward } from "./src/ops/embedding.ts";
export {
  rmsnormBackward,
  type RmsnormBackwardArgs,
  rmsnormForward,
  type RmsnormForwardArgs,
} from "./src/ops/rmsnorm.ts";
export { type RopeArgs, ropeBackward, ropeForward, type RopeTable, ropeTable } from "./src/ops/rope.ts";
export { swigluBackward, swigluForward } from "./src/ops/swiglu.ts";
export {
  logprobBackward,
  type LogprobBackwardArgs,
  logprobForward,
  type LogprobForwardArgs,
} from "./src/ops/logprob.ts";
export { gradNorm } from "./src/ops/gradnorm.ts";
export { adamw, type AdamwSettings, type AdamwState } from "./src/ops/adamw.ts";
export { kvcacheWrite, type KvcacheWriteArgs } from "./src/ops/kvcache.ts";
export {
  attentionBackward,
  type AttentionBackwardArgs,
  attentionForward,
  type AttentionForwardArgs,
  MAX_HEAD_DIM,
} from "./src/ops/attention.ts";
export { type AttentionRanges, cacheRanges, packedCausalRanges, type RangeFacts } from "./src/ops/attention_ranges.ts";
export { sample, type SampleArgs, type SampleSettings } from "./src/ops/sample.ts";
export {
  type PolicyInputArrays,
  type PolicyKernelSettings,
  type PolicyLossArgs,
  policyLossForward,
  type PolicyLossKernel,
  uploadPolicyInputs,
} from "./src/ops/policy_loss.ts";
export type { AttentionVariant } from "./src/ops/attention_variants.ts";
export type { MatmulVariant } from "./src/ops/matmul_variants.ts";

// Model and tokenizers.
export { type Architecture, type ModelConfig, parseModelConfig, toHfConfig } from "./src/model/config.ts";
export { type Init, paramCount, type ParamSpec, paramTable } from "./src/model/params.ts";
export { type HostTensor, loadSafetensors, type SaveDType, saveSafetensors } from "./src/model/safetensors.ts";
export {
  type ChatMessage,
  type SpecialRole,
  type SpecialToken,
  Tokenizer,
  type TokenizerFiles,
} from "./src/model/tokenizer.ts";
export { wordTokenizer, type WordTokenizerOptions } from "./src/model/word_tokenizer.ts";
export {
  type LoadedModel,
  loadModelDir,
  saveModelDir,
  type SaveModelOptions,
  stopTokenIds,
} from "./src/model/model_dir.ts";
export { initParams } from "./src/model/init.ts";
export { buildTinyModel, parseTinySpec, type TinyModel, type TinySpec } from "./src/model/tiny.ts";
export { TensorSet } from "./src/model/weights.ts";
export { type PackedBatch, PackedInputs, packSequences, type SequenceInput } from "./src/model/packing.ts";
export { type ForwardOptions, type ForwardResult, Transformer } from "./src/model/transformer.ts";
export type { HeadChunk, HeadChunkGrad, HeadGrad } from "./src/model/head.ts";
export {
  type DecodeLimits,
  type DecodePiece,
  type FinishReason,
  type Generation,
  Generator,
  type GeneratorOptions,
} from "./src/model/generate.ts";
export { type GpuModel, loadGpuModel } from "./src/model/load.ts";
export {
  initLora,
  LORA_MODULES,
  LoraAdapters,
  type LoraKeys,
  type LoraModule,
  type LoraSettings,
  loraTable,
  resolveTargets,
} from "./src/model/lora.ts";
export { type LoraModelOptions, loraTransformer } from "./src/model/lora_model.ts";
export {
  bindAdapter,
  loadAdapterDir,
  type LoadedAdapter,
  mergeAdapter,
  saveAdapterDir,
  type SaveAdapterOptions,
} from "./src/model/peft.ts";
export { DIMENSION_LETTERS, type DimensionLetter } from "./src/model/shapes.ts";
export { type CacheSetting, KV_CACHE_SETTINGS } from "./src/model/infer.ts";

// Environments and tasks.
export { type ActionParse, EnvClient, type EnvSession, type SessionOptions } from "./src/env/client.ts";
export { ADAPTERS, envClient, type EnvName } from "./tasks/mod.ts";
export { EnvError, type EnvErrorKind, isEnvError } from "./src/env/errors.ts";
export type { Adapter, EnvId, ResetReply, StepResult, TaskSet } from "./src/env/adapter.ts";
export type { TransportOptions } from "./src/env/http.ts";
export type { GameServerOptions } from "./src/env/server/serve.ts";
export type { ServedGame, ServedReset, ServedStep, ServedTasks } from "./src/env/server/game.ts";
export { serveTextCraft, type TextCraftServer, type TextCraftServerOptions } from "./tasks/textcraft/game/server.ts";
export type { CraftingTree, Ingredient, Recipe } from "./tasks/textcraft/game/tree.ts";
export { getTask, type Task, TASKS } from "./tasks/mod.ts";
export type {
  AugmentContext,
  BaseModelWords,
  DrillPiece,
  EmbeddedServer,
  OpeningTools,
  PretrainRecipe,
  Prompt,
  RlWorlds,
  RlWorldsOptions,
  SyntheticTasks,
  TaskOptions,
  TaskVocabulary,
  TextEpisode,
} from "./src/task/task.ts";
export { type SeenSoFar, stateAnchor } from "./src/task/anchor.ts";
export { type OraclePlan, solveGoal, solveTask } from "./tasks/textcraft/oracle.ts";
export {
  type CommandLine,
  type CraftCount,
  type Ingredient as CommandIngredient,
  type Opening as CraftingOpening,
  parseOpening,
  type StackFrames,
  type StackOptions,
  stackPlan,
  type StackTurn,
} from "./tasks/textcraft/stack.ts";
export {
  randomWorld,
  type World,
  WorldGame,
  worldOpening,
  type WorldOptions,
  type WorldStep,
} from "./tasks/textcraft/worlds.ts";
export { ApiCallError, type ApiClass, CLASS_NAMES, functionDocs, newInstance } from "./tasks/bfcl/classes/api.ts";
export {
  type ApiInstance,
  type ClassFactory,
  executeCall,
  type Instances,
  methodOwners,
  newInstances,
  type Scenario,
} from "./tasks/bfcl/execute.ts";
export { parseCallList, type ParsedCall, type PyValue } from "./tasks/bfcl/literal.ts";
export { jsonDumps, parsePyJson, pyDeepCopy, PyFloat, pyRepr, renderResult } from "./tasks/bfcl/classes/py.ts";
export { PyRandom } from "./src/util/py_random.ts";
export type { FunctionDoc } from "./tasks/bfcl/classes/docs.ts";

// RL math.
export {
  type AdvantageEstimator,
  type AlgorithmSettings,
  broadcastAdvantages,
  type EpisodeTurns,
  type EstimatedAdvantages,
  type EstimatorInput,
  gaeAdvantages,
  type GaeOptions,
  type GroupId,
  grpoAdvantages,
  type GrpoOptions,
  maskedWhiten,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
  type Rows,
  type TokenAdvantages,
} from "./src/rl/advantages.ts";
export {
  aggregateLoss,
  type AggregationOptions,
  aggregationWeights,
  LOSS_AGG_MODES,
  type LossAggMode,
} from "./src/rl/aggregation.ts";
export { KL_ESTIMATORS, type KlEstimator, type KlKind, klPenalty, klPenaltyGrad } from "./src/rl/kl.ts";
export {
  type PolicyLossSettings,
  type PolicyMetrics,
  policyMetrics,
  type PolicyObjective,
  policyObjective,
  type PolicyTokens,
  type ResolvedPolicyLoss,
  resolvePolicyLoss,
} from "./src/rl/policy_loss.ts";
export { type ClipSettings, type PolicyLoss, policySurrogate, type SurrogateTerm } from "./src/rl/surrogate.ts";
export { type ValueLoss, valueLoss } from "./src/rl/value_loss.ts";
export {
  DPO_LOSS_TYPES,
  dpoLogitGrad,
  dpoLoss,
  type DpoLosses,
  type DpoLossType,
  type DpoMetrics,
  dpoMetrics,
  type DpoOptions,
  type DpoPairs,
  type PairRule,
  preferred,
} from "./src/rl/dpo.ts";
export { checkSchedule, roundsAt, type RoundsControl, type RoundsSchedule, scheduleOf } from "./src/rl/rounds.ts";
export { ADVANTAGE_ESTIMATORS, advantageEstimator } from "./src/rl/estimators.ts";
export { type GigpoAdvantages, gigpoAdvantages, type GigpoEpisode, type GigpoOptions } from "./src/rl/gigpo.ts";
export { POLICY_LOSSES, policyLoss } from "./src/rl/policy_losses.ts";
export { type Registered, Registry } from "./src/rl/registry.ts";

// Training.
export { type ConfigSource, resolveConfig } from "./src/config/load.ts";
export { RunConfig } from "./src/config/schema.ts";
export {
  type EpisodeSpec,
  type RolloutContext,
  type RolloutOptions,
  runRollouts,
  type Sampler,
} from "./src/rollout/agent.ts";
export { ScriptedSampler } from "./src/rollout/scripted.ts";
export { ChatRenderer, type Opening } from "./src/rollout/chat.ts";
export {
  episodeTurns,
  type Finish,
  trainable,
  type Trajectory,
  type TurnRecord,
  turnRewards,
  turnSpans,
} from "./src/rollout/trajectory.ts";
export { AdamW, ADAMW_DEFAULTS, type AdamwConfig, type StepStats } from "./src/update/optimizer.ts";
export { type NllGrad, nllGrad } from "./src/train/nll.ts";
export { type PolicyLossHead, policyLossHead } from "./src/update/policy_head.ts";
export type { Critic, CriticStep } from "./src/update/critic.ts";
export type { Learner } from "./src/update/learner.ts";
export type { MiniBatchResult, UpdateSequence } from "./src/update/rl_update.ts";
export type { TrainSequence } from "./src/update/sequences.ts";
export { rlStep, type RlStepContext, type RlStepResult } from "./src/train/rl_step.ts";
export { type StalenessRule, stalenessRule } from "./src/rl/off_policy.ts";
export { stepMetrics, type StepMetricsOptions } from "./src/train/step_metrics.ts";
export { type EvalResult, evaluate, type Rates } from "./src/train/eval.ts";
export { runTraining } from "./src/train/run.ts";
export type { PlayedStep, Reporter, RolloutSource, RunOptions, RunSummary } from "./src/train/types.ts";
export { type PretrainOptions, type PretrainSummary, runPretraining } from "./src/pretrain/run.ts";
export type { CopyAccuracy } from "./src/pretrain/data.ts";
export { writeReport } from "./src/report/write.ts";
