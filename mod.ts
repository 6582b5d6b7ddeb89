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
 * Advantages (GRPO, RLOO, REINFORCE++, GAE), loss aggregation, KL estimators, the clipped surrogate and the whole
 * policy objective, the value loss and the ScalingInter round schedule, on plain arrays.
 *
 * ```ts
 * import { aggregateLoss, grpoAdvantages, klPenalty, roundsAt } from "./mod.ts";
 * grpoAdvantages([1, 0, 1, 1], [0, 0, 1, 1]); // [0.707, -0.707, 0, 0]
 * klPenalty([-1.5], [-1], "low_var_kl"); // [0.1487]
 * aggregateLoss([[1, 3], [2]], [[1, 1], [1]], "token-mean"); // 2
 * roundsAt({ type: "scaling_inter", rounds: [10, 20, 30], stepsPerStage: 100 }, 150); // 20
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
 */

// Runtime and kernels.
export { getGpu, type Gpu, type GpuFeatures, hasAdapter, requestGpu, withTensorLimit } from "./src/gpu/device.ts";
export { readStored, rowParts, SplitTensor, type StoredTensor } from "./src/gpu/split.ts";
export { Batch } from "./src/gpu/batch.ts";
export { kernel, type Shader } from "./src/gpu/pipeline.ts";
export { type DType, empty, fromHost, type HostData, Tensor, write, zeros } from "./src/gpu/tensor.ts";
export { GpuTimer, type Timing } from "./src/gpu/timing.ts";
export { Rng } from "./src/util/random.ts";
export { biasGrad, matmul, type MatmulArgs } from "./src/ops/matmul.ts";
export { embeddingBackward, embeddingForward } from "./src/ops/embedding.ts";
export { rmsnormBackward, rmsnormForward } from "./src/ops/rmsnorm.ts";
export { ropeBackward, ropeForward, ropeTable } from "./src/ops/rope.ts";
export { swigluBackward, swigluForward } from "./src/ops/swiglu.ts";
export { logprobBackward, logprobForward } from "./src/ops/logprob.ts";
export { gradNorm } from "./src/ops/gradnorm.ts";
export { adamw, type AdamwSettings } from "./src/ops/adamw.ts";
export { kvcacheWrite } from "./src/ops/kvcache.ts";
export {
  attentionBackward,
  type AttentionBackwardArgs,
  attentionForward,
  type AttentionForwardArgs,
  MAX_HEAD_DIM,
} from "./src/ops/attention.ts";
export { type AttentionRanges, cacheRanges, packedCausalRanges } from "./src/ops/attention_ranges.ts";
export { sample, type SampleArgs, type SampleSettings } from "./src/ops/sample.ts";
export { policyLossForward, uploadPolicyInputs } from "./src/ops/policy_loss.ts";

// Model and tokenizers.
export { type ModelConfig, parseModelConfig, toHfConfig } from "./src/model/config.ts";
export { paramCount, type ParamSpec, paramTable } from "./src/model/params.ts";
export { type HostTensor, loadSafetensors, saveSafetensors } from "./src/model/safetensors.ts";
export { type ChatMessage, Tokenizer } from "./src/model/tokenizer.ts";
export { wordTokenizer } from "./src/model/word_tokenizer.ts";
export { type LoadedModel, loadModelDir, saveModelDir, stopTokenIds } from "./src/model/model_dir.ts";
export { initParams } from "./src/model/init.ts";
export { buildTinyModel, parseTinySpec } from "./src/model/tiny.ts";
export { TensorSet } from "./src/model/weights.ts";
export { PackedInputs, packSequences, type SequenceInput } from "./src/model/packing.ts";
export { type ForwardOptions, Transformer } from "./src/model/transformer.ts";
export { type HeadChunk, type HeadGrad } from "./src/model/head.ts";
export { type DecodeLimits, type Generation, Generator } from "./src/model/generate.ts";
export { loadGpuModel } from "./src/model/load.ts";
export {
  initLora,
  LoraAdapters,
  type LoraSettings,
  loraTable,
  loraTransformer,
  resolveTargets,
} from "./src/model/lora.ts";
export { bindAdapter, loadAdapterDir, mergeAdapter, saveAdapterDir } from "./src/model/peft.ts";
export { DIMENSION_LETTERS, type DimensionLetter } from "./src/model/shapes.ts";

// Environments and tasks.
export { EnvClient, type EnvSession } from "./src/env/client.ts";
export { ADAPTERS, envClient, type EnvName } from "./tasks/mod.ts";
export { EnvError, isEnvError } from "./src/env/errors.ts";
export { serveTextCraft } from "./tasks/textcraft/game/server.ts";
export { getTask, type Task, TASKS } from "./tasks/mod.ts";
export type { SyntheticTasks, TaskOptions, TextEpisode } from "./src/task/task.ts";
export { solveGoal, solveTask } from "./tasks/textcraft/oracle.ts";
export { parseOpening, stackPlan } from "./tasks/textcraft/stack.ts";
export { randomWorld, WorldGame, worldOpening } from "./tasks/textcraft/worlds.ts";
export { ApiCallError, type ApiClass, CLASS_NAMES, functionDocs, newInstance } from "./tasks/bfcl/classes/api.ts";
export { executeCall, methodOwners, newInstances } from "./tasks/bfcl/execute.ts";
export { parseCallList } from "./tasks/bfcl/literal.ts";
export { jsonDumps, parsePyJson, pyDeepCopy, PyFloat, pyRepr, renderResult } from "./tasks/bfcl/classes/py.ts";
export { PyRandom } from "./tasks/bfcl/classes/py_random.ts";

// RL math.
export {
  broadcastAdvantages,
  gaeAdvantages,
  grpoAdvantages,
  maskedWhiten,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
} from "./src/rl/advantages.ts";
export { aggregateLoss, aggregationWeights, LOSS_AGG_MODES, type LossAggMode } from "./src/rl/aggregation.ts";
export {
  type KlKind,
  klPenalty,
  klPenaltyGrad,
  type PolicyLossSettings,
  policyMetrics,
  policyObjective,
} from "./src/rl/policy_loss.ts";
export { type ClipSettings, policySurrogate, type SurrogateTerm } from "./src/rl/surrogate.ts";
export { valueLoss } from "./src/rl/value_loss.ts";
export { checkSchedule, roundsAt, type RoundsSchedule } from "./src/rl/rounds.ts";

// Training.
export { resolveConfig } from "./src/config/load.ts";
export { RunConfig } from "./src/config/schema.ts";
export { type RolloutOptions, runRollouts, type Sampler } from "./src/rollout/agent.ts";
export { ScriptedSampler } from "./src/rollout/scripted.ts";
export { ChatRenderer } from "./src/rollout/chat.ts";
export { trainable, type Trajectory } from "./src/rollout/trajectory.ts";
export { AdamW, ADAMW_DEFAULTS, type AdamwConfig } from "./src/update/optimizer.ts";
export { nllGrad } from "./src/train/nll.ts";
export { policyLossHead } from "./src/update/policy_head.ts";
export { rlStep } from "./src/train/rl_step.ts";
export { stepMetrics } from "./src/train/step_metrics.ts";
export { type EvalResult, evaluate } from "./src/train/eval.ts";
export { runTraining } from "./src/train/run.ts";
export type { Reporter, RunSummary } from "./src/train/types.ts";
export { type PretrainSummary, runPretraining } from "./src/pretrain/run.ts";
export { writeReport } from "./src/report/write.ts";
