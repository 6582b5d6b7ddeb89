/**
 * Crucible's public library API: the WebGPU runtime and the transformer kernels.
 *
 * @example
 * ```ts
 * import { Batch, fromHost, getGpu, matmul, zeros } from "./mod.ts";
 * const gpu = await getGpu();
 * const a = fromHost(gpu, [1, 2, 3, 4], [2, 2]);
 * const c = zeros(gpu, [2, 2]);
 * const batch = new Batch(gpu);
 * matmul(batch, { a, b: a, out: c });
 * const [values] = await batch.read([c]);
 * ```
 */
export { getGpu, type Gpu, type GpuFeatures, hasAdapter, requestGpu } from "./src/gpu/device.ts";
export { Batch, type Dispatch, foldGrid } from "./src/gpu/batch.ts";
export { type Kernel, kernel } from "./src/gpu/pipeline.ts";
export { BufferPool, poolOf, type PoolStats } from "./src/gpu/pool.ts";
export { Rng } from "./src/gpu/random.ts";
export { type DType, empty, fromHost, type HostData, Tensor, write, zeros } from "./src/gpu/tensor.ts";
export { GpuTimer, type Timing } from "./src/gpu/timing.ts";
export { UniformLayout, uniforms } from "./src/gpu/uniforms.ts";
export { biasGrad, matmul, type MatmulArgs } from "./src/ops/matmul.ts";
export { MATMUL_VARIANTS, type MatmulVariant, pickMatmulVariant } from "./src/ops/matmul_variants.ts";
export { embeddingBackward, embeddingBuckets, embeddingForward } from "./src/ops/embedding.ts";
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
export { drawUniforms, sample, type SampleArgs, type SampleSettings } from "./src/ops/sample.ts";

export { type ModelConfig, parseModelConfig, toHfConfig } from "./src/model/config.ts";
export { paramCount, type ParamSpec, paramTable } from "./src/model/params.ts";
export {
  type HostTensor,
  loadSafetensors,
  parseSafetensors,
  saveSafetensors,
  serializeSafetensors,
} from "./src/model/safetensors.ts";
export { type ChatMessage, Tokenizer } from "./src/model/tokenizer.ts";
export { wordTokenizer } from "./src/model/word_tokenizer.ts";
export { type LoadedModel, loadModelDir, saveModelDir, stopTokenIds } from "./src/model/checkpoint.ts";
export { initParams } from "./src/model/init.ts";
export { buildTinyModel, parseTinySpec } from "./src/model/tiny.ts";
export { TensorSet } from "./src/model/weights.ts";
export { PackedInputs, packSequences, type SequenceInput } from "./src/model/packing.ts";
export { type ForwardOptions, Transformer } from "./src/model/transformer.ts";
export { type HeadChunk, type HeadGrad } from "./src/model/head.ts";
export { type DecodeLimits, type Generation, Generator } from "./src/model/generate.ts";
export { loadGpuModel } from "./src/model/load.ts";
export { AdamW, ADAMW_DEFAULTS, type AdamwConfig } from "./src/train/optimizer.ts";
export { nllGrad } from "./src/train/nll.ts";

export { EnvClient, type EnvSession } from "./src/env/client.ts";
export { ADAPTERS, envClient, type EnvName } from "./src/env/adapters/mod.ts";
export { EnvError, isEnvError } from "./src/env/errors.ts";
export { type EpisodeResult, runEpisode } from "./src/env/episode.ts";
export { serveTextCraft, textCraftHandler } from "./src/env/textcraft/server.ts";
export { solveGoal, solveTask } from "./src/env/textcraft/oracle.ts";
export { getTask, type Task, TASKS } from "./tasks/mod.ts";

export {
  broadcastAdvantages,
  gaeAdvantages,
  grpoAdvantages,
  maskedWhiten,
  outcomeRewards,
  reinforceBaselineAdvantages,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
} from "./src/train/advantages.ts";
export {
  aggregateLoss,
  aggregationWeights,
  type KlKind,
  klPenalty,
  klPenaltyGrad,
  LOSS_AGG_MODES,
  type LossAggMode,
  policySurrogate,
  valueLoss,
} from "./src/train/losses.ts";
export { type PolicyLossSettings, policyMetrics, policyObjective } from "./src/train/policy_objective.ts";
export { policyLossHead, uploadPolicyInputs } from "./src/train/policy_loss.ts";
export { checkSchedule, roundsAt, type RoundsSchedule } from "./src/rollout/scheduler.ts";
export { type RolloutOptions, runRollouts, type Sampler } from "./src/rollout/agent.ts";
export { ChatRenderer } from "./src/rollout/chat.ts";
export { trainable, type Trajectory } from "./src/rollout/trajectory.ts";
export { rlStep, stepMetrics } from "./src/train/rl_step.ts";
export { type Reporter, type RunSummary, runTraining } from "./src/train/run.ts";
export { type EvalResult, evaluate } from "./src/train/eval.ts";
export { resolveConfig } from "./src/config/load.ts";
export { RunConfig } from "./src/config/schema.ts";
export { writeReport } from "./src/train/report.ts";
