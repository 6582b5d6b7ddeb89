/**
 * verl's and AgentGym-RL's command-line names for Crucible's config keys, so that their training commands work as
 * written: `actor_rollout_ref.actor.optim.lr=1e-6` sets `actor.lr`, Hydra's `+key=value` and `++key=value` set a
 * key, a scalar `algorithm.rounds_ctrl.rounds=20` is the one-stage list `[20]`, and settings that only describe
 * their distributed machinery (vLLM memory, tensor parallel sizes, FSDP) are accepted and ignored, each with a note.
 */

/** verl / AgentGym-RL path -> Crucible path. */
export const VERL_ALIASES: Readonly<Record<string, string>> = {
  "actor_rollout_ref.model.path": "model.path",
  "actor_rollout_ref.model.enable_gradient_checkpointing": "model.recompute",
  "actor_rollout_ref.model.lora_rank": "model.lora_rank",
  "actor_rollout_ref.model.lora_alpha": "model.lora_alpha",
  "actor_rollout_ref.model.target_modules": "model.target_modules",
  "actor_rollout_ref.model.lora_adapter_path": "model.adapter",
  "actor_rollout_ref.actor.optim.lr": "actor.lr",
  "actor_rollout_ref.actor.optim.weight_decay": "actor.weight_decay",
  "actor_rollout_ref.actor.optim.betas": "actor.betas",
  "actor_rollout_ref.actor.optim.lr_warmup_steps": "actor.lr_schedule.warmup_steps",
  "actor_rollout_ref.actor.optim.min_lr_ratio": "actor.lr_schedule.min_lr_ratio",
  "actor_rollout_ref.actor.optim.warmup_style": "actor.lr_schedule.type",
  "actor_rollout_ref.actor.ppo_mini_batch_size": "actor.ppo_mini_batch_size",
  "actor_rollout_ref.actor.ppo_max_token_len_per_gpu": "actor.ppo_micro_batch_tokens",
  "actor_rollout_ref.actor.ppo_epochs": "actor.ppo_epochs",
  "actor_rollout_ref.actor.policy_loss.loss_mode": "actor.policy_loss",
  "actor_rollout_ref.actor.clip_ratio_low": "actor.clip_ratio_low",
  "actor_rollout_ref.actor.clip_ratio_high": "actor.clip_ratio_high",
  "actor_rollout_ref.actor.clip_ratio_c": "actor.clip_ratio_c",
  "actor_rollout_ref.actor.loss_agg_mode": "actor.loss_agg_mode",
  "actor_rollout_ref.actor.entropy_coeff": "actor.entropy_coeff",
  "actor_rollout_ref.actor.use_kl_loss": "actor.use_kl_loss",
  "actor_rollout_ref.actor.kl_loss_coef": "actor.kl_loss_coef",
  "actor_rollout_ref.actor.kl_loss_type": "actor.kl_loss_type",
  "actor_rollout_ref.actor.grad_clip": "actor.grad_clip",
  "actor_rollout_ref.rollout.n": "rollout.n",
  "actor_rollout_ref.rollout.temperature": "rollout.temperature",
  "actor_rollout_ref.rollout.top_p": "rollout.top_p",
  "actor_rollout_ref.rollout.top_k": "rollout.top_k",
  "actor_rollout_ref.rollout.max_tokens": "rollout.max_tokens_per_turn",
  "actor_rollout_ref.rollout.response_length": "rollout.max_response_length",
  "actor_rollout_ref.rollout.prompt_length": "rollout.max_prompt_length",
  "data.max_prompt_length": "rollout.max_prompt_length",
  "data.max_response_length": "rollout.max_response_length",
  "data.train_file": "data.train_items",
  "data.val_file": "data.test_items",
  "trainer.total_training_steps": "trainer.total_steps",
  "trainer.critic_warmup": "critic.warmup_steps",
  "critic.optim.lr": "critic.lr",
  "critic.optim.weight_decay": "critic.weight_decay",
  "critic.grad_clip": "critic.grad_clip",
  "trainer.default_local_dir": "trainer.runs_dir",
  // verl-agent's GiGPO (its algorithm.gamma is algorithm.gigpo.gamma here; its gigpo.mode=mean_std_norm is
  // algorithm.gigpo.normalize_by_std=true).
  "algorithm.gigpo.step_advantage_w": "algorithm.gigpo.step_weight",
};

/**
 * TRL's names (GRPOConfig and its TrainingArguments base; DPOConfig for DPO's; PEFT's LoraConfig for the LoRA keys) for Crucible's keys,
 * shown by `deno task config --explain` for people coming from TRL. Not accepted as overrides: TRL's names are flat
 * (`seed`, `temperature`) and would read as Crucible's top-level keys.
 */
export const TRL_NAMES: Readonly<Record<string, string>> = {
  "model.recompute": "gradient_checkpointing",
  "model.lora_rank": "r (peft.LoraConfig)",
  "model.lora_alpha": "lora_alpha (peft.LoraConfig)",
  "model.target_modules": "target_modules (peft.LoraConfig)",
  "actor.lr": "learning_rate",
  "actor.weight_decay": "weight_decay",
  "actor.betas": "adam_beta1, adam_beta2",
  "actor.eps": "adam_epsilon",
  "actor.grad_clip": "max_grad_norm",
  "actor.lr_schedule.type": "lr_scheduler_type",
  "actor.lr_schedule.warmup_steps": "warmup_steps",
  "actor.ppo_epochs": "num_iterations",
  "actor.clip_ratio_low": "epsilon",
  "actor.clip_ratio_high": "epsilon_high",
  "actor.kl_loss_coef": "beta",
  "actor.loss_agg_mode": "loss_type (grpo = seq-mean-token-mean, bnpo = token-mean, dr_grpo = seq-mean-token-sum-norm)",
  "algorithm.norm_adv_by_std_in_grpo": "scale_rewards",
  "rollout.n": "num_generations",
  "rollout.temperature": "temperature",
  "rollout.top_p": "top_p",
  "rollout.top_k": "top_k",
  "rollout.max_prompt_length": "max_prompt_length",
  "rollout.max_response_length": "max_completion_length",
  "trainer.total_steps": "max_steps",
  "trainer.save_freq": "save_steps",
  "trainer.test_freq": "eval_steps",
  "trainer.seed": "seed",
  "trainer.runs_dir": "output_dir",
  "dpo.beta": "beta (DPOConfig)",
  "dpo.loss_type": "loss_type (DPOConfig)",
  "dpo.label_smoothing": "label_smoothing (DPOConfig)",
  "dpo.lr": "learning_rate (DPOConfig)",
  "dpo.epochs": "num_train_epochs (DPOConfig)",
  "dpo.batch_pairs": "per_device_train_batch_size (DPOConfig)",
  "dpo.weight_decay": "weight_decay (DPOConfig)",
  "dpo.grad_clip": "max_grad_norm (DPOConfig)",
};

/** Settings of verl's distributed machinery that Crucible accepts and ignores (one process, one GPU). */
const IGNORED_PREFIXES = [
  "actor_rollout_ref.rollout.gpu_memory_utilization",
  "actor_rollout_ref.rollout.tensor_model_parallel_size",
  "actor_rollout_ref.rollout.max_model_len",
  "actor_rollout_ref.rollout.max_num_batched_tokens",
  "actor_rollout_ref.rollout.enforce_eager",
  "actor_rollout_ref.rollout.free_cache_engine",
  "actor_rollout_ref.rollout.name",
  "actor_rollout_ref.rollout.rollout_log_dir",
  "actor_rollout_ref.rollout.log_prob_micro_batch_size",
  "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
  "actor_rollout_ref.ref.",
  "actor_rollout_ref.actor.fsdp_config.",
  "actor_rollout_ref.actor.ppo_micro_batch_size",
  "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
  "actor_rollout_ref.actor.use_dynamic_bsz",
  "actor_rollout_ref.actor.ulysses_sequence_parallel_size",
  "actor_rollout_ref.model.use_remove_padding",
  "trainer.n_gpus_per_node",
  "trainer.nnodes",
  "trainer.logger",
  "trainer.project_name",
  "trainer.experiment_name",
  "trainer.val_before_train",
  "critic.model.",
  "critic.ppo_micro_batch_size",
  "critic.ppo_micro_batch_size_per_gpu",
  "critic.ppo_max_token_len_per_gpu",
];

/** An override after translation: the Crucible overrides to apply (none when ignored) and a note for the user. */
export interface Translated {
  overrides: string[];
  note?: string;
}

/**
 * Translates one command-line override from verl's and Hydra's forms to Crucible's. Crucible's own keys pass
 * through unchanged.
 *
 * @example
 * ```ts
 * translateOverride("actor_rollout_ref.actor.optim.lr=1e-6"); // { overrides: ["actor.lr=1e-6"], note: "..." }
 * translateOverride("algorithm.rounds_ctrl.rounds=20"); // { overrides: ["algorithm.rounds_ctrl.rounds=[20]"] }
 * ```
 */
export function translateOverride(raw: string): Translated {
  const text = raw.replace(/^\+{1,2}/, "");
  const eq = text.indexOf("=");
  if (eq <= 0) return { overrides: [text] };
  const key = text.slice(0, eq).trim(), value = text.slice(eq + 1);
  if (IGNORED_PREFIXES.some((p) => key === p || (p.endsWith(".") && key.startsWith(p)))) {
    return {
      overrides: [],
      note: `${key} is verl's distributed-training setting; Crucible runs in one process and ignores it`,
    };
  }
  if (key === "actor_rollout_ref.actor.clip_ratio") {
    return {
      overrides: [`actor.clip_ratio_low=${value}`, `actor.clip_ratio_high=${value}`],
      note: `${key} is actor.clip_ratio_low and actor.clip_ratio_high`,
    };
  }
  const alias = VERL_ALIASES[key];
  const target = alias ?? key;
  // AgentGym-RL writes a fixed horizon as one number; Crucible's schedule is always a list of stages.
  const v = target === "algorithm.rounds_ctrl.rounds" && /^\s*\d+\s*$/.test(value) ? `[${value.trim()}]` : value;
  return { overrides: [`${target}=${v}`], note: alias ? `${key} is ${alias}` : undefined };
}
