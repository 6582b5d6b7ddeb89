/**
 * The run configuration: one typed schema with defaults. YAML files hold only what they change; `a.b.c=value`
 * overrides apply last. Unknown keys and wrong types stop the program with the key's path (src/config/load.ts).
 * Names follow verl's and AgentGym-RL's where the same knob exists, so their published settings carry over.
 */
import { z } from "zod";
import { KV_CACHE_SETTINGS } from "../model/infer.ts";
import { LOSS_AGG_MODES } from "../rl/aggregation.ts";
import { DPO_LOSS_TYPES } from "../rl/dpo.ts";
import { ADVANTAGE_ESTIMATORS } from "../rl/estimators.ts";
import { isKlKind, KL_ESTIMATORS } from "../rl/kl.ts";
import { POLICY_LOSSES } from "../rl/policy_losses.ts";
import type { Registered, Registry } from "../rl/registry.ts";
import { checkSchedule, scheduleOf } from "../rl/rounds.ts";

export { KV_CACHE_SETTINGS };

const int = (min = 0) => z.number().int().min(min);
const num = () => z.number().finite();

/**
 * A name one of the registry's entries answers to (src/rl/registry.ts), checked when a config is resolved, so an
 * algorithm registered since counts; an unknown one is refused naming the registered ones.
 */
const registered = (r: Registry<Registered>) =>
  z.string().superRefine((name, ctx) => {
    if (r.has(name)) return;
    ctx.addIssue({
      code: "custom",
      message: `is "${name}", which is no registered ${r.what}; ${r.known()} ` +
        "(deno task config --algorithms lists them with their config keys)",
    });
  });

const Model = z.strictObject({
  /** A Hugging Face model directory; null trains the built-in tiny model. */
  path: z.string().nullable().default(null),
  /**
   * The built-in model's shape when path is null: a shipped shape's name (tiny, crucible_tiny) or a YAML file like
   * configs/models/tiny.yaml; null = tiny.
   */
  tiny: z.string().nullable().default(null),
  /** Re-run each layer's forward in the backward instead of keeping its activations. */
  recompute: z.boolean().default(false),
  /** Storage dtype of saved checkpoints; auto keeps the starting model's (f32 for the built-in one). */
  save_dtype: z.enum(["auto", "f32", "f16", "bf16"]).default("auto"),
  /**
   * LoRA's rank r (verl's lora_rank): 0 trains every parameter; r > 0 freezes the base model and trains low-rank
   * adapters on the target_modules (at most the narrowest targeted layer's width).
   */
  lora_rank: int().default(0),
  /** LoRA's alpha: the adapter's term is scaled by lora_alpha / lora_rank. null = 16, verl's default. */
  lora_alpha: num().positive().nullable().default(null),
  /** The projections LoRA adapts: "all-linear" or names such as [q_proj, v_proj]. null = all-linear, verl's default. */
  target_modules: z.union([z.string(), z.array(z.string())]).nullable().default(null),
  /** A PEFT adapter directory to start from (its r, alpha and targets; the keys above may only repeat them). */
  adapter: z.string().nullable().default(null),
  /** With LoRA, the frozen base's storage: auto = f16 where the GPU has shader-f16, else f32. */
  base_dtype: z.enum(["auto", "f32", "f16"]).default("auto"),
  /** With LoRA, also write `<checkpoint>-merged` (the adapter merged into the base) beside final and sft-final. */
  save_merged: z.boolean().default(false),
}).superRefine((m, ctx) => {
  if (m.lora_rank > 0 || m.adapter !== null) return;
  const set: [string, boolean][] = [
    ["lora_alpha", m.lora_alpha !== null],
    ["target_modules", m.target_modules !== null],
    ["base_dtype", m.base_dtype !== "auto"],
    ["save_merged", m.save_merged],
  ];
  for (const [key] of set.filter(([, given]) => given)) {
    ctx.addIssue({
      code: "custom",
      path: [key],
      message: "is a LoRA setting, but model.lora_rank is 0 (full fine-tuning): set model.lora_rank to at least 1 " +
        `(at most the narrowest targeted layer's width), or remove model.${key}`,
    });
  }
});

const Env = z.strictObject({
  /** Running AgentGym servers; empty starts Crucible's embedded server (TextCraft only). */
  urls: z.array(z.string()).default([]),
  /** Milliseconds one request to the environment server may take before it counts as failed. */
  timeout_ms: int(1).default(60000),
  /** Retries of a failed request (connection errors, 5xx), with backoff, before the episode fails. */
  retries: int().default(3),
  /** Most requests open at once against the environment servers. */
  max_in_flight: int(1).default(64),
  /** How long a run waits for its environment to come back when a step's episodes mostly failed, in minutes. */
  outage_minutes: num().min(0).default(30),
  /**
   * Abandoned attempts of one RL step in a row (most of its episodes failed in the environment) before the run saves
   * and stops with exit code 3.
   */
  max_step_retries: int(0).default(5),
  /** Abandoned RL steps over a run (this process) before it saves and stops with exit code 3. */
  max_abandoned_steps: int(0).default(20),
  /** Attempts of an evaluation or demonstration episode whose environment failed, before it counts as failed. */
  episode_retries: int(0).default(2),
});

const Data = z.strictObject({
  /** Prompts per training step. */
  train_batch_size: int(1).default(8),
  /** The task's built-in split RL and SFT draw their tasks from. */
  train_split: z.string().default("train"),
  /** The task's built-in split evaluations play. */
  test_split: z.string().default("test"),
  /** AgentGym-RL-Data-ID item files (`[{"item_id": "textcraft_12"}]`) instead of the built-in splits. */
  train_items: z.string().nullable().default(null),
  /** An item file for the evaluations instead of test_split (same format as train_items). */
  test_items: z.string().nullable().default(null),
  /** A prompt file (plain text, or {"user", "assistant"} JSON) instead of the task's own wording. */
  prompt_file: z.string().nullable().default(null),
  /**
   * Preference pairs to train DPO on, with no exploration (algorithm.learner dpo): TRL's conversational preference
   * format (`prompt`, `chosen`, `rejected` as {role, content} messages) or AgentGym's (`id`, `prompt`, `chosen`,
   * `rejected` as {from, value} turns), a JSON array or JSONL; the prompt opens with instructions, acknowledgement
   * and first observation.
   */
  preferences: z.string().nullable().default(null),
  /** The prompt written inline instead (wins over prompt_file). */
  prompt: z.strictObject({
    /** The first user message: the task instructions. */
    user: z.string(),
    /** The assistant's reply to it that opens the conversation (e.g. "OK."). */
    assistant: z.string(),
  }).nullable().default(null),
  /**
   * How RL steps pick their prompts: "uniform" walks the shuffled train split; "signal" favours the task's categories
   * (TextCraft: depth) whose groups have differed in reward so far, never giving one less than `floor` of that
   * weight (src/rl/prompts.ts).
   */
  prompt_sampling: z.strictObject({
    /** uniform or signal, as above. */
    type: z.enum(["uniform", "signal"]).default("uniform"),
    /** With signal: the least weight a category keeps, as a share of its uniform weight. */
    floor: num().gt(0).max(1).default(0.05),
    /**
     * With signal: what a category's weight multiplies. "prompt": its prompt count (a category of many prompts is
     * drawn more); "category": nothing, so the categories compete on signal alone and a small one (TextCraft's 43
     * depth-3 goals against 221 at depth 2) is drawn as often as a large one of the same signal.
     */
    balance: z.enum(["prompt", "category"]).default("prompt"),
  }).default({ type: "uniform", floor: 0.05, balance: "prompt" }),
  /**
   * Fresh synthetic worlds among each RL step's prompts, beside the train split (the task's `rlWorlds` hook;
   * TextCraft: random crafting worlds under its rules, never a test goal, depths from task_options.rl_world_depths).
   * Needs the task's embedded server. Each step's metrics give reward and success of both kinds side by side.
   */
  synthetic_prompts: z.strictObject({
    /** Share of each step's prompts that are synthetic worlds: round(share × train_batch_size) of them; 0 = none. */
    share: num().min(0).max(1).default(0),
    /** Seed of the worlds (world k of a step is drawn from it and k alone); never pretraining's seeds. */
    seed: z.number().int().default(31415),
  }).default({ share: 0, seed: 31415 }),
}).superRefine((d, ctx) => {
  const count = Math.round(d.synthetic_prompts.share * d.train_batch_size);
  if (d.synthetic_prompts.share > 0 && count === 0) {
    ctx.addIssue({
      code: "custom",
      path: ["synthetic_prompts", "share"],
      message: `is ${d.synthetic_prompts.share} of data.train_batch_size=${d.train_batch_size} prompts, which rounds ` +
        `to none: set at least ${0.5 / d.train_batch_size} (half a prompt), or 0 for none`,
    });
  }
});

const Rollout = z.strictObject({
  /** Samples per prompt (the GRPO group size). */
  n: int(1).default(8),
  /** Sampling temperature of the training rollouts; 0 is greedy. */
  temperature: num().min(0).default(1),
  /** Nucleus sampling: keep the smallest set of tokens holding this much probability; 1 keeps all. */
  top_p: num().gt(0).max(1).default(1),
  /** Keep the k likeliest tokens; 0 keeps all. */
  top_k: int().default(0),
  /** Most tokens the agent may write in one turn. */
  max_tokens_per_turn: int(1).default(512),
  /** Most tokens of the first prompt (task instructions and first observation). */
  max_prompt_length: int(1).default(1024),
  /** Most tokens of everything after the prompt: the agent's turns and the observations between them. */
  max_response_length: int(1).default(4096),
  /** Episodes held in the KV cache at once. */
  slots: int(1).default(64),
  /** Decode steps per GPU submit (one readback per block). */
  block_steps: int(1).default(8),
  /**
   * Element type of the KV cache: auto is f16 where the adapter has shader-f16 (half the memory and, on a CPU
   * rasteriser, about half the attention's loads; accumulation stays f32), else f32.
   */
  kv_cache: z.enum(KV_CACHE_SETTINGS).default("auto"),
  /**
   * Policy versions a trajectory may lag the learner (AReaL's max_head_offpolicyness, TRL's max_staleness): 0 is the
   * on-policy step; over a cluster (train --cluster) workers may then sample up to this many versions behind, and a
   * trajectory past the bound is dropped, counted and its prompt played again. In one process, any value > 0 plays
   * the next step's episodes during this step's update on a copy of the weights (one version behind, never more).
   */
  max_staleness: int().default(0),
});

const RoundsCtrl = z.strictObject({
  /**
   * fixed keeps the last of rounds; scaling_inter_stepwise (AgentGym-RL's ScalingInter) moves to the next stage of
   * rounds every steps_scaling_inter steps.
   */
  type: z.enum(["fixed", "scaling_inter_stepwise"]).default("scaling_inter_stepwise"),
  /** Most rounds (agent turns) per episode, one number per stage. */
  rounds: z.array(int(1)).min(1).default([10, 20, 30]),
  /** RL steps per stage of rounds. */
  steps_scaling_inter: int(1).default(100),
}).superRefine((r, ctx) => {
  try {
    checkSchedule(scheduleOf(r));
  } catch (e) {
    ctx.addIssue({
      code: "custom",
      path: ["rounds"],
      message: `is [${r.rounds.join(", ")}]: ${(e as Error).message}; list the stages from the fewest rounds to ` +
        "the most, or set algorithm.rounds_ctrl.type=fixed (which keeps the last)",
    });
  }
});

const Gigpo = z.strictObject({
  /** γ of GiGPO's step-level returns: a turn's return is its reward plus γ times the next turn's return. */
  gamma: num().min(0).max(1).default(0.95),
  /** The step level's weight w: each turn's advantage is its episode's plus w times its own step-level one. */
  step_weight: num().min(0).default(1),
  /**
   * Divide by the group's standard deviation (+ 1e-6), at both levels (verl-agent's mean_std_norm); false only
   * centres them (its mean_norm, its default).
   */
  normalize_by_std: z.boolean().default(false),
});

/** What learns after the warm start (algorithm.learner). */
export const LEARNERS = ["rl", "dpo", "eto", "agentevol"] as const;

/** One of {@linkcode LEARNERS}. */
export type LearnerName = typeof LEARNERS[number];

const Algorithm = z.strictObject({
  /**
   * What learns after the warm start: rl (online RL, trainer.total_steps steps), dpo (DPO on data.preferences, no
   * exploration), eto (ETO: explore, pair with the expert's trajectories, DPO; eto.iterations rounds) or agentevol
   * (AgentEvol: keep the successes of each round's exploration, fine-tune the base on them and the demonstrations;
   * agentevol.iterations rounds). null = dpo when data.preferences names a file, else rl.
   */
  learner: z.enum(LEARNERS).nullable().default(null),
  /**
   * The advantage estimator: a registered one's name (src/rl/estimators.ts; `--explain` lists them). gae trains a
   * critic (config section critic) and uses its values; the others need none. gigpo credits each turn besides the
   * episode (algorithm.gigpo).
   */
  adv_estimator: registered(ADVANTAGE_ESTIMATORS).default("grpo"),
  /** GRPO divides each group's advantages by the group's reward standard deviation (false: only centres them). */
  norm_adv_by_std_in_grpo: z.boolean().default(true),
  /** Discount of later rewards (GAE and REINFORCE++'s returns). */
  gamma: num().default(1),
  /** GAE's λ (verl's algorithm.lam). */
  lam: num().min(0).max(1).default(1),
  /**
   * Taken from a successful episode's reward for each round it took, in the advantages only (the logged rewards and
   * every success rate stay the environment's): of two successes at one prompt, the one with fewer refused or wasted
   * actions scores higher, so a group that all succeeds still teaches. Failures keep their reward, so an episode
   * cut short by the token budget never outscores one that ran to the round limit. 0 = off. At most 0.5 over the
   * largest round limit, so that a success loses at most 0.5 (TextCraft's success earns 1, a failure 0).
   */
  round_penalty: num().min(0).default(0),
  /** The round limit per episode over training (AgentGym-RL's rounds_ctrl). */
  rounds_ctrl: RoundsCtrl.default(RoundsCtrl.parse({})),
  /**
   * GiGPO's settings (algorithm.adv_estimator=gigpo): credit for each turn from the turns of a prompt's episodes that
   * acted from the same state, beside GRPO's credit for the episode.
   */
  gigpo: Gigpo.default(Gigpo.parse({})),
}).superRefine((a, ctx) => {
  const most = Math.max(...a.rounds_ctrl.rounds);
  if (a.round_penalty * most > 0.5 + 1e-12) {
    ctx.addIssue({
      code: "custom",
      path: ["round_penalty"],
      message: `is ${a.round_penalty}: over ${most} rounds it would take ${a.round_penalty * most} of a success's ` +
        `reward; set at most ${0.5 / most} (0.5 over the largest of rounds_ctrl.rounds)`,
    });
  }
});

const LrSchedule = z.strictObject({
  /** constant, warmup (linear from 0 over warmup_steps, then constant) or cosine (warmup, then cosine decay). */
  type: z.enum(["constant", "warmup", "cosine"]).default("constant"),
  /** Steps of linear warmup from 0 to the learning rate. */
  warmup_steps: int().default(0),
  /** Cosine decays to lr · min_lr_ratio at the last step. */
  min_lr_ratio: num().min(0).max(1).default(0),
});

const Actor = z.strictObject({
  /** The policy's (actor's) learning rate in RL. */
  lr: num().positive().default(1e-6),
  /** The actor's learning-rate schedule over the RL steps. */
  lr_schedule: LrSchedule.default(LrSchedule.parse({})),
  /** AdamW's β1 and β2, each in [0, 1): β2 = 1 makes the bias correction divide by zero. */
  betas: z.tuple([num().min(0).lt(1), num().min(0).lt(1)]).default([0.9, 0.999]),
  /** AdamW's epsilon. */
  eps: num().positive().default(1e-8),
  /** AdamW's decoupled weight decay. */
  weight_decay: num().min(0).default(0.01),
  /** Clip the gradient's global norm to this; 0 does not clip. */
  grad_clip: num().min(0).default(1),
  /** Passes over each step's rollouts. */
  ppo_epochs: int(1).default(1),
  /** Prompts per optimizer step (times rollout.n trajectories). */
  ppo_mini_batch_size: int(1).default(8),
  /** Tokens per micro-batch (one forward/backward); a memory knob only: the loss does not depend on it. */
  ppo_micro_batch_tokens: int(1).default(8192),
  /** The policy loss's surrogate, a registered one's name (src/rl/policy_losses.ts; vanilla: PPO's clipped ratio). */
  policy_loss: registered(POLICY_LOSSES).default("vanilla"),
  /** PPO's clip below: the ratio to the old policy is kept above 1 - clip_ratio_low. */
  clip_ratio_low: num().min(0).lt(1).default(0.2),
  /** PPO's clip above: the ratio is kept below 1 + clip_ratio_high (higher = DAPO's clip-higher). */
  clip_ratio_high: num().min(0).default(0.2),
  /** Dual-clip PPO's bound for negative advantages. */
  clip_ratio_c: num().gt(1).default(3),
  /** How token losses combine into the batch's loss (verl's modes). */
  loss_agg_mode: z.enum(LOSS_AGG_MODES).default("token-mean"),
  /** Weight of the entropy bonus. */
  entropy_coeff: num().default(0.001),
  /** Add a KL penalty to the reference (starting) policy to the loss. */
  use_kl_loss: z.boolean().default(true),
  /** Weight of the KL penalty. */
  kl_loss_coef: num().min(0).default(0.001),
  /** The KL estimator, a registered one's name (src/rl/kl.ts, verl's names); a trailing + uses the straight-through gradient. */
  kl_loss_type: z.string().superRefine((name, ctx) => {
    if (isKlKind(name)) return;
    ctx.addIssue({
      code: "custom",
      message: `is "${name}", which is no registered ${KL_ESTIMATORS.what} (a trailing + allowed); ` +
        `${KL_ESTIMATORS.known()} (deno task config --algorithms lists them)`,
    });
  }).default("low_var_kl"),
  /** Recompute the behaviour log-probs with a forward pass (verl's default) instead of the sampler's. */
  recompute_old_logprob: z.boolean().default(true),
  /**
   * Truncated importance sampling (verl's and TRL's cap): each sampled token's policy-gradient term is weighted by
   * min(π_learner / π_sampler, tis_cap), correcting for a sampler that is stale or computes differently; null = off.
   * Needs recompute_old_logprob (the learner's own behaviour log-probs).
   */
  tis_cap: num().positive().nullable().default(null),
}).superRefine((a, ctx) => {
  if (a.tis_cap !== null && !a.recompute_old_logprob) {
    ctx.addIssue({
      code: "custom",
      path: ["tis_cap"],
      message: "weights the sampler's log-probs against the learner's, which actor.recompute_old_logprob=false never " +
        "computes: set actor.recompute_old_logprob=true, or actor.tis_cap=null",
    });
  }
});

const Critic = z.strictObject({
  /** The critic's learning rate (verl's critic.optim.lr). */
  lr: num().positive().default(1e-5),
  /** Clip range of the value loss around the old values (verl's critic.cliprange_value). */
  cliprange_value: num().min(0).default(0.5),
  /** RL steps at the start that train only the critic (verl's trainer.critic_warmup). */
  warmup_steps: int(0).default(0),
  /**
   * true: the value head reads the actor's own features and only the head trains (one backbone); false: the critic
   * is a copy of the starting model with its own backbone, as verl's critic is.
   */
  share_backbone: z.boolean().default(false),
  /** AdamW's decoupled weight decay for the critic. */
  weight_decay: num().min(0).default(0.01),
  /** Clip the critic's gradient norm to this; 0 does not clip. */
  grad_clip: num().min(0).default(1),
});

const Sft = z.strictObject({
  /** Warm-start with supervised fine-tuning before RL. */
  enabled: z.boolean().default(false),
  /**
   * "oracle" plays the task's own demonstrations of the train split (the task's options choose their layout);
   * otherwise an AgentGym trajectory file (JSON/JSONL).
   */
  data: z.string().default("oracle"),
  /** Passes over the SFT data (fractions allowed). */
  epochs: num().positive().default(1),
  /** The warm start's learning rate. */
  lr: num().positive().default(1e-5),
  /** The warm start's learning-rate schedule. */
  lr_schedule: LrSchedule.default(LrSchedule.parse({})),
  /** AdamW's decoupled weight decay in the warm start. */
  weight_decay: num().min(0).default(0.01),
  /** Clip the gradient norm to this; 0 does not clip. */
  grad_clip: num().min(0).default(1),
  /** Tokens per optimizer step. */
  batch_tokens: int(1).default(16384),
  /**
   * Weight of a language-modelling loss on the prompt and observation tokens, relative to the assistant turns'.
   * 0 (the default) is the usual SFT: loss on assistant turns only.
   */
  context_loss_weight: num().min(0).default(0),
});

const Dpo = z.strictObject({
  /** β, the implicit reward's scale: larger keeps the policy nearer the reference (TRL's beta). */
  beta: num().positive().default(0.1),
  /** TRL's loss_type: sigmoid (DPO), ipo (on each trajectory's mean token log-probability, as TRL) or hinge. */
  loss_type: z.enum(DPO_LOSS_TYPES).default("sigmoid"),
  /** cDPO's label smoothing: the assumed chance that a pair's preference is flipped (sigmoid only). */
  label_smoothing: num().min(0).lt(0.5).default(0),
  /** DPO's learning rate (TRL's default). */
  lr: num().positive().default(1e-6),
  /** The learning-rate schedule over one round's steps (each ETO round trains anew, as ETO's script does). */
  lr_schedule: LrSchedule.default(LrSchedule.parse({})),
  /** Passes over a round's pairs (TRL's num_train_epochs; fractions allowed). */
  epochs: num().positive().default(3),
  /** Pairs per optimizer step (TRL's per-device batch of 8, one device, no accumulation). */
  batch_pairs: int(1).default(8),
  /** AdamW's decoupled weight decay in DPO. */
  weight_decay: num().min(0).default(0),
  /** Clip the gradient norm to this; 0 does not clip. */
  grad_clip: num().min(0).default(1),
}).superRefine((d, ctx) => {
  if (d.label_smoothing > 0 && d.loss_type !== "sigmoid") {
    ctx.addIssue({
      code: "custom",
      path: ["label_smoothing"],
      message: `is ${d.label_smoothing}, but label smoothing is the sigmoid loss's and dpo.loss_type is ` +
        `${d.loss_type}: set dpo.label_smoothing=0, or dpo.loss_type=sigmoid`,
    });
  }
});

const Eto = z.strictObject({
  /** Rounds of exploring with the newest weights, pairing and training DPO (ETO's three). */
  iterations: int(1).default(3),
  /**
   * The expert trajectories: "oracle" plays the task's own demonstrations; otherwise an AgentGym trajectory file
   * (`item_id`, `conversations`, optional `reward`, default 1) of the train tasks.
   */
  expert: z.string().default("oracle"),
  /** The two rewards of a pair must differ by at least this (AgentGym's make_dpo_dataset.py reward_gap). */
  reward_gap: num().min(0).default(0.01),
  /** The better trajectory of a pair must reach this reward (make_dpo_dataset.py's expert_threshold). */
  expert_threshold: num().default(0.7),
  /** Episodes sampled per task a round; the lowest-rewarded is paired (make_dpo_dataset.py keeps the lowest). */
  samples: int(1).default(1),
  /**
   * A rejected explored episode is cut after the expert's number of turns plus this many (ETO's
   * construct_preference.py: 5), so a failure that ran to the round limit does not outweigh the expert's episode;
   * null keeps it whole.
   */
  extra_turns: int(0).nullable().default(5),
  /** Train tasks explored a round: 0 = the whole train split; N walks the shuffled split N tasks a round. */
  tasks: int(0).default(0),
});

const AgentEvol = z.strictObject({
  /** Rounds of exploring with the current weights and fine-tuning the base on demonstrations plus successes. */
  iterations: int(1).default(4),
  /** Episodes sampled per task a round; each success is kept. */
  samples: int(1).default(1),
  /** Train tasks explored a round: 0 = the whole train split; N walks the shuffled split N tasks a round. */
  tasks: int(0).default(0),
});

const Pretrain = z.strictObject({
  /** Optimizer steps of the whole pretraining; the learning-rate schedule spans them. */
  steps: int(1).default(20000),
  /** Tokens per optimizer step (whole sequences, so a step holds at least this many). */
  batch_tokens: int(1).default(2048),
  /** Pretraining's peak learning rate. */
  lr: num().positive().default(2e-3),
  /** Pretraining's learning-rate schedule. */
  lr_schedule: LrSchedule.default(LrSchedule.parse({ type: "cosine", warmup_steps: 200, min_lr_ratio: 0.1 })),
  /** AdamW's decoupled weight decay in pretraining. */
  weight_decay: num().min(0).default(0),
  /** Clip the gradient norm to this; 0 does not clip. */
  grad_clip: num().min(0).default(1),
  /** Steps per chunk: each chunk ends with a checkpoint and an evaluation on held-out synthetic tasks. */
  chunk_steps: int(1).default(500),
  /** Steps over which the task's curriculum goes from its easiest tasks to its full difficulty. */
  curriculum_steps: int(1).default(6000),
  /** Share of sequences that are generic copy strings of the task's names (down to a third of it by the end). */
  copy_share: num().min(0).max(1).default(0.15),
  /** Steps at the start that see copy strings only: the induction circuit forms before the tasks arrive. */
  copy_warmup_steps: int(0).default(0),
  /**
   * Share of the lookup copy strings whose lines' tails repeat a few tokens (3 to 8 per string, as a command line
   * repeats `using`, commas and small counts), so that the token before the next one says nothing and only the place
   * after the line's head does; 0 keeps the original copy strings, batch for batch.
   */
  copy_repeats: num().min(0).max(1).default(0),
  /**
   * Share of the plain copy strings that copy from a random place instead of from the start (the string, a
   * separator, one name from the string's first half, then what follows it there): no count of positions from the
   * separators finds the source, only a match on content, which the lookups need. 0 keeps the plain copies, batch for
   * batch.
   */
  copy_seek: num().min(0).max(1).default(0),
  /**
   * Share of the seek strings keyed by two adjacent tokens instead of one (a string over a small alphabet, so one
   * token finds many places and only the pair finds the source), as the count after `X using` in a reply is found
   * by that pair; 0 keeps the seek strings, batch for batch.
   */
  copy_seek_pairs: num().min(0).max(1).default(0),
  /**
   * Share of the other seek strings that alternate a name and one of the task's link phrases (TextCraft: `using 9`,
   * `, 1`) and ask a name, so the answer starts with the link after it: the match on content with a link token as
   * the key's place and the copied token, as the count after X in a command list is; 0 keeps the seek strings,
   * batch for batch. A task without link phrases refuses a share above 0.
   */
  copy_seek_links: num().min(0).max(1).default(0),
  /**
   * Share of the lookup copy strings in which the asked head also stands inside another line's tail (as a crafted
   * item is named again among another recipe's inputs), so the copy must find it where a line starts; 0 keeps the
   * lookups, batch for batch.
   */
  copy_key_inputs: num().min(0).max(1).default(0),
  /**
   * Share of all copy strings that are the task's own look-up drills (TextCraft: a command list, then frames `X using`
   * whose inputs only X's line gives), the look-up in the words and layout of the replies; 0 keeps the copy strings,
   * batch for batch. A task without drills refuses a share above 0.
   */
  copy_drill: num().min(0).max(1).default(0),
  /** Weight of the loss on the environment's text (command lists, observations) against the replies'. */
  context_loss_weight: num().min(0).default(0.1),
  /** Longest sequence kept, in tokens; longer episodes are drawn again. */
  max_sequence_tokens: int(16).default(1800),
  /** Seed of the training data (batch k is drawn from seed and k alone). */
  seed: z.number().int().default(7),
  /** Seed of the held-out tasks; training never draws from it. */
  eval_seed: z.number().int().default(424242),
  /** Held-out synthetic tasks per evaluation. */
  eval_tasks: int(1).default(64),
});

/** Settings of `train --cluster` and `worker` (NATS JetStream); the in-process run ignores them. */
const Cluster = z.strictObject({
  /** Seconds a worker holds a prompt without a heartbeat before JetStream hands it to another (the deadline). */
  ack_wait_s: num().positive().default(60),
  /** Deliveries of one prompt before JetStream gives up on it (a group that kills every worker). */
  max_deliver: int(1).default(5),
  /**
   * Prompt groups a worker takes and plays at once; 0 = as many as its rollout.slots hold. Fewer spreads a step's
   * groups over more workers.
   */
  max_groups: int().default(0),
  /** The largest group message the learner reads; a larger one is refused (`rejected_size`). The server's limit: 8 MB. */
  max_message_bytes: int(1).default(8 * 1024 * 1024),
  /** Refused messages (not counting duplicates and other runs') after which the learner drops their worker. */
  max_bad_messages: int(1).default(10),
});

const Trainer = z.strictObject({
  /** RL steps of the run. */
  total_steps: int(0).default(100),
  /** Save a checkpoint every this many steps (0: only at the end). */
  save_freq: int(0).default(25),
  /** Evaluate on the test split every this many steps (0: none between; the run still evaluates at its end). */
  test_freq: int(0).default(10),
  /** The run's random seed. */
  seed: z.number().int().default(1),
  /** Where runs go; each run gets a folder inside. */
  runs_dir: z.string().default("runs"),
  /** Samples per test task at evaluation. */
  eval_samples: int(1).default(1),
  /** Sampling temperature of the evaluations; 0 is greedy. */
  eval_temperature: num().min(0).default(0),
  /** Test tasks evaluated during training (0 = the whole split). */
  eval_limit: int(0).default(0),
  /** Optimizer steps skipped in a row (a non-finite gradient) that stop the run, with a checkpoint. */
  max_skipped_steps: int(1).default(5),
  /**
   * Largest factor by which one step may multiply the trainable weights' L2 norm; a step past it (or leaving the
   * weights non-finite) has diverged: the run stops with exit code 2 and saves nothing of it.
   */
  max_norm_growth: num().gt(1).default(10),
  /**
   * Diverged steps (past max_norm_growth, non-finite weights, a loss spike) a phase rolls back before the next one
   * stops the run with exit code 2: the weights and optimizer state from before the step are restored from a copy
   * kept on the GPU (3 × the trainable f32 bytes) and the step's batch is skipped. 0 keeps no copy and stops at the
   * first.
   */
  max_rollbacks: int(0).default(3),
  /**
   * A step whose loss is above this factor × the median of the last 20 accepted steps' (5 at least), and
   * trainer.loss_spike_rise nats above it at least, has spiked and is rolled back as a diverged one; SFT's loss (RL's
   * policy loss has no scale to spike against). 0 turns it off.
   */
  loss_spike_factor: num().min(0).refine((v) => v === 0 || v > 1, "must be 0 (off) or above 1").default(5),
  /**
   * How far (nats) above the running median an SFT loss must also rise to be a spike, besides
   * trainer.loss_spike_factor × it: 5 is tokens e⁵ (150) times less likely than usual. SFT batches are heavy-tailed:
   * on models/crucible-tiny healthy ones reach 1.8 above the median (a rise of 1 stopped the main job at step 41), on
   * models/crucible-base single ones 3.8 (a rise of 3 rolled two back); a diverged step goes towards the uniform loss
   * (7.6 nats for TextCraft's words).
   */
  loss_spike_rise: num().min(0).default(5),
});

/**
 * The whole run configuration's schema. Every key's meaning, type and default: `deno task config --explain KEY`.
 *
 * @ignore
 */
export const RunConfig = z.strictObject({
  /** The environment task: textcraft, babyai, sciworld, webshop, ... */
  task: z.string().default("textcraft"),
  /** The task's own settings (e.g. TextCraft's oracle_format), checked by the task itself (tasks/<name>/). */
  task_options: z.record(z.string(), z.unknown()).default({}),
  /** The model to train: a Hugging Face directory or the built-in tiny one, LoRA and checkpoint storage. */
  model: Model.default(Model.parse({})),
  /** The environment servers and how requests to them are made. */
  env: Env.default(Env.parse({})),
  /** Which tasks training and evaluation play, and the prompt. */
  data: Data.default(Data.parse({})),
  /** How episodes are sampled: group size, sampling, length limits, KV cache. */
  rollout: Rollout.default(Rollout.parse({})),
  /** The advantage estimator and the round schedule. */
  algorithm: Algorithm.default(Algorithm.parse({})),
  /** The policy's optimizer and PPO-style loss. */
  actor: Actor.default(Actor.parse({})),
  /** The critic of PPO with GAE (algorithm.adv_estimator=gae); verl's critic.* names. */
  critic: Critic.default(Critic.parse({})),
  /** The supervised warm start before RL. */
  sft: Sft.default(Sft.parse({})),
  /** DPO's loss and optimizer (algorithm.learner dpo and eto). */
  dpo: Dpo.default(Dpo.parse({})),
  /** ETO's rounds: exploration, pairing with the expert's trajectories (algorithm.learner eto). */
  eto: Eto.default(Eto.parse({})),
  /** AgentEvol's rounds (algorithm.learner agentevol); each round's fine-tuning uses the sft.* settings. */
  agentevol: AgentEvol.default(AgentEvol.parse({})),
  /** `deno task pretrain`: a base model from the task's synthetic tasks. */
  pretrain: Pretrain.default(Pretrain.parse({})),
  /** Steps, checkpoints, evaluations and where the run folder goes. */
  trainer: Trainer.default(Trainer.parse({})),
  /** `train --cluster` and `worker`: how prompts are handed to workers over NATS JetStream. */
  cluster: Cluster.default(Cluster.parse({})),
}).superRefine((c, ctx) => {
  const learner = c.algorithm.learner;
  if (c.data.preferences !== null && learner !== null && learner !== "dpo") {
    ctx.addIssue({
      code: "custom",
      path: ["algorithm", "learner"],
      message: `is ${learner}, but data.preferences=${c.data.preferences} trains DPO on a file: set ` +
        "algorithm.learner=dpo (or leave it unset), or data.preferences=null",
    });
  }
  if (learner === "dpo" && c.data.preferences === null) {
    ctx.addIssue({
      code: "custom",
      path: ["algorithm", "learner"],
      message: "is dpo, which trains on the pairs of data.preferences, and none is named: set data.preferences=FILE, " +
        "or algorithm.learner=eto to make pairs by exploring",
    });
  }
});

/** What learns after the warm start: algorithm.learner, or its null's meaning (dpo with data.preferences, else rl). */
export function learnerOf(c: RunConfig): LearnerName {
  return c.algorithm.learner ?? (c.data.preferences !== null ? "dpo" : "rl");
}

/**
 * A resolved run configuration (`deno task config` prints one; `--explain KEY` says what a key means).
 *
 * @ignore
 */
export type RunConfig = z.infer<typeof RunConfig>;
