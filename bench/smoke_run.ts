/**
 * The smallest `train textcraft` run that still passes through every phase (warm start, rollouts, update, checkpoint,
 * test evaluation): a one-layer model of width 16 and two episodes of two rounds per step. `bench faults` kills and
 * resumes it; the tests that run the commands as a user does start from it and add their own learning rates and
 * lengths.
 */

/** The model of the smoke run, as a `model.tiny` YAML file. */
export const SMOKE_MODEL_YAML = "hidden_size: 16\nintermediate_size: 32\nnum_hidden_layers: 1\n" +
  "num_attention_heads: 2\nnum_key_value_heads: 1\nrope_theta: 10000\nrms_norm_eps: 1.0e-6\n" +
  "tie_word_embeddings: true\nmax_position_embeddings: 2048\ninit_std: 0.05\nseed: 3\n";

/** The smoke run's shape: batch, rollout lengths, rounds, warm start in the action format, a checkpoint per step. */
export const SMOKE_RUN: readonly string[] = [
  "data.train_batch_size=2",
  "rollout.n=2",
  "rollout.max_tokens_per_turn=6",
  "rollout.max_response_length=96",
  "rollout.max_prompt_length=1200",
  "algorithm.rounds_ctrl.type=fixed",
  "algorithm.rounds_ctrl.rounds=[2]",
  "actor.ppo_mini_batch_size=1",
  "sft.enabled=true",
  "task_options.oracle_format=action",
  "trainer.save_freq=1",
  "trainer.eval_limit=2",
];

/**
 * The smoke run's overrides with its model at `modelFile` (SMOKE_MODEL_YAML, written by writeSmokeModel), then
 * `changed`: what a test or a benchmark sets beside it (learning rates, lengths, steps), later overrides winning.
 *
 * @example
 * ```ts
 * await writeSmokeModel(`${dir}/tiny.yaml`);
 * const args = ["train", "textcraft", ...smokeArgs(`${dir}/tiny.yaml`, ["trainer.total_steps=3"])];
 * ```
 */
export function smokeArgs(modelFile: string, changed: readonly string[] = []): string[] {
  return [`model.tiny=${modelFile}`, "model.path=null", ...SMOKE_RUN, ...changed];
}

/** Writes the smoke run's model (SMOKE_MODEL_YAML) to `modelFile`; resolves to the path. */
export async function writeSmokeModel(modelFile: string): Promise<string> {
  await Deno.writeTextFile(modelFile, SMOKE_MODEL_YAML);
  return modelFile;
}

/**
 * The smoke run as RL steps alone: no warm start, no checkpoint, no test evaluation, one task in the final one. A
 * cluster's learner (tests/cluster, `bench cluster`) and the runs that time RL steps start from it.
 */
export const RL_ONLY: readonly string[] = [
  "sft.enabled=false",
  "trainer.save_freq=0",
  "trainer.test_freq=0",
  "trainer.eval_limit=1",
];
