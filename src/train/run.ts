/**
 * A whole training run: SFT warm start (optional), evaluation, then RL steps with periodic evaluation and
 * checkpoints, all written to one run folder. A stop request (Ctrl-C) finishes the step in progress, saves a
 * checkpoint and returns; `resume` continues from the folder's latest checkpoint exactly where it stopped.
 */
import { stringify } from "yaml";
import type { RunConfig } from "../config/schema.ts";
import { getGpu } from "../gpu/device.ts";
import { Rng } from "../gpu/random.ts";
import { Generator } from "../model/generate.ts";
import { Transformer } from "../model/transformer.ts";
import { TensorSet } from "../model/weights.ts";
import type { Trajectory } from "../rollout/trajectory.ts";
import { type LoadedCheckpoint, loadLatestCheckpoint, saveCheckpoint, type TrainerState } from "./checkpoint.ts";
import { loadModelDir, stopTokenIds } from "../model/checkpoint.ts";
import type { Gpu } from "../gpu/device.ts";
import { type EvalResult, evaluate } from "./eval.ts";
import { RunLog } from "./metrics.ts";
import { AdamW } from "./optimizer.ts";
import { rlStep, rolloutOptions, stepMetrics } from "./rl_step.ts";
import { lrAt } from "./schedule.ts";
import { runSft, sftEpochs, sftPlan } from "./sft.ts";
import { agentGymSequences, oracleEpisodes, renamedEpochs } from "./sft_data.ts";
import { ItemRenamer } from "../env/textcraft/rename.ts";
import { CraftingTree } from "../env/textcraft/tree.ts";
import { ChatRenderer } from "../rollout/chat.ts";
import type { EnvClient } from "../env/client.ts";
import type { Task } from "../../tasks/task.ts";
import type { TrainSequence } from "./sequences.ts";
import { checkEnv, type HostModel, loadModel, openEnv, splitIndices } from "./setup.ts";

/** Progress reporting, implemented by the command line. */
export interface Reporter {
  /** A progress bar for `total` units of a phase. */
  bar(label: string, total: number): { tick(n?: number, note?: string): void; done(note?: string): void };
  /** One line of text. */
  line(text: string): void;
}

/** Options of {@linkcode runTraining}. */
export interface RunOptions {
  config: RunConfig;
  runDir: string;
  resume: boolean;
  reporter: Reporter;
  /** Polled between steps: true asks the run to save and stop. */
  stopRequested: () => boolean;
}

/** What a run reports at the end. */
export interface RunSummary {
  runDir: string;
  interrupted: boolean;
  sftEval?: EvalResult;
  finalEval?: EvalResult;
  seconds: number;
  lastCheckpoint?: string;
}

/** Runs (or resumes) training as configured. */
export async function runTraining(o: RunOptions): Promise<RunSummary> {
  const start = performance.now();
  const c = o.config, rep = o.reporter, log = new RunLog(o.runDir);
  await Deno.mkdir(o.runDir, { recursive: true });
  const env = await openEnv(c);
  try {
    await checkEnv(env);
    const gpu = await getGpu();
    const resumed: LoadedCheckpoint | undefined = o.resume ? await loadLatestCheckpoint(o.runDir) : undefined;
    const host: HostModel = resumed ? fromCheckpoint(resumed) : await loadModel(c, env.task);
    if (!o.resume) await Deno.writeTextFile(`${o.runDir}/config.yaml`, stringify(c));
    rep.line(
      `Run folder ${o.runDir}; model ${host.source} (${host.config.architecture}, vocab ${host.config.vocabSize}); ${gpu.name}`,
    );
    const weights = TensorSet.fromHost(gpu, host.config, host.tensors);
    const model = new Transformer(gpu, host.config, weights, { recompute: c.model.recompute });
    const grads = TensorSet.zeros(gpu, host.config);
    const state: TrainerState = resumed?.state ?? {
      version: 1,
      phase: c.sft.enabled ? "sft" : "rl",
      sftStep: 0,
      rlStep: 0,
      optimizerStep: 0,
      data: { epoch: 0, offset: 0 },
      reference: null,
      notes: {},
    };
    const train = await splitIndices(c, env.task, "train");
    const test = await splitIndices(c, env.task, "test");
    const evalSet = c.trainer.eval_limit > 0 ? test.slice(0, c.trainer.eval_limit) : test;
    const maxLen = c.rollout.max_prompt_length + c.rollout.max_response_length;
    const generator = new Generator(model, { slots: c.rollout.slots, maxLen, blockSteps: c.rollout.block_steps });
    const rolloutCtx = { generator, tokenizer: host.tokenizer, client: env.client, task: env.task };
    const save = async (opt: AdamW | undefined, name: string) => {
      const dir = await saveCheckpoint(o.runDir, name, {
        config: host.config,
        weights,
        tokenizer: host.tokenizer,
        opt,
        state: { ...state, optimizerStep: opt?.step ?? state.optimizerStep },
        dtype: c.model.save_dtype,
      });
      return dir;
    };
    const runEval = async (phase: string, step: number) => {
      const bar = rep.bar(`eval ${phase}`, evalSet.length * c.trainer.eval_samples);
      const { result, trajectories } = await evaluate(rolloutCtx, evalSet, {
        ...rolloutOptions(c, env.task.maxRounds, host.stopIds, c.trainer.eval_temperature),
        samples: c.trainer.eval_samples,
        seed: c.trainer.seed + 100003,
        onEpisode: (t: Trajectory) => bar.tick(1, t.success ? "solved" : t.finish),
      });
      bar.done(`success ${(100 * result.avg).toFixed(1)}%`);
      await log.evaluation({ phase, step, time: new Date().toISOString(), ...result });
      await log.rollouts(`eval-${phase}`, step, trajectories, host.tokenizer);
      return result;
    };
    // One optimizer per phase (SFT, RL): betas and eps from actor, decay and clipping per phase.
    const optimizer = (weightDecay: number, maxGradNorm: number) =>
      new AdamW(gpu, weights, grads, {
        beta1: c.actor.betas[0],
        beta2: c.actor.betas[1],
        eps: c.actor.eps,
        weightDecay,
        maxGradNorm,
      });
    let lastCheckpoint: string | undefined;
    let sftEval = (state.notes.sftEval as EvalResult | undefined) ?? undefined;

    // Phase 1: supervised warm start.
    if (state.phase === "sft") {
      const opt = optimizer(c.sft.weight_decay, c.sft.grad_clip);
      if (resumed?.moments) opt.restore(resumed.moments.m, resumed.moments.v, resumed.state.optimizerStep);
      const epochs = sftEpochs(c.sft.epochs, await sftData(c, env.task, host, env.client, rep));
      const plan = { batchTokens: c.sft.batch_tokens, seed: c.trainer.seed };
      const totalSft = sftPlan(epochs, plan).length;
      const settings = {
        ...plan,
        microBatchTokens: c.actor.ppo_micro_batch_tokens,
        contextWeight: c.sft.context_loss_weight,
        lr: (k: number) => lrAt(c.sft.lr, c.sft.lr_schedule, k, totalSft),
      };
      const bar = rep.bar("sft", totalSft);
      bar.tick(state.sftStep);
      await runSft(gpu, model, grads, opt, epochs, settings, state.sftStep, async (r) => {
        state.sftStep = r.step;
        await log.metric({ phase: "sft", time: new Date().toISOString(), ...r });
        bar.tick(1, `loss ${r.loss.toFixed(3)}`);
        if (c.trainer.save_freq > 0 && r.step % c.trainer.save_freq === 0) {
          lastCheckpoint = await save(opt, "sft-latest");
        }
      }, o.stopRequested);
      if (state.sftStep < totalSft) {
        lastCheckpoint = await save(opt, "sft-latest");
        opt.release();
        return { runDir: o.runDir, interrupted: true, seconds: secondsSince(start), lastCheckpoint };
      }
      bar.done();
      opt.release();
      sftEval = await runEval("sft", 0);
      state.notes.sftEval = sftEval;
      state.phase = "rl";
      state.reference = "checkpoints/sft-final";
      lastCheckpoint = await save(undefined, "sft-final");
      rep.line(`After SFT: test success ${(100 * sftEval.avg).toFixed(1)}%`);
    }

    if (c.trainer.total_steps === 0) {
      return { runDir: o.runDir, interrupted: false, sftEval, seconds: secondsSince(start), lastCheckpoint };
    }

    // Phase 2: RL.
    const opt = optimizer(c.actor.weight_decay, c.actor.grad_clip);
    if (resumed?.moments && resumed.state.phase === "rl") {
      opt.restore(resumed.moments.m, resumed.moments.v, resumed.state.optimizerStep);
    }
    if (c.actor.use_kl_loss && state.reference === null) {
      // No SFT phase saved the starting weights: keep them as the reference before RL changes them.
      state.reference = "checkpoints/rl-reference";
      lastCheckpoint = await save(undefined, "rl-reference");
    }
    const reference = await referenceModel(c, o.runDir, state, gpu);
    const stepsTotal = c.trainer.total_steps;
    const optimizerStepsTotal = stepsTotal * c.actor.ppo_epochs *
      Math.ceil(c.data.train_batch_size / c.actor.ppo_mini_batch_size);
    const bar = rep.bar("rl", stepsTotal);
    bar.tick(state.rlStep);
    while (state.rlStep < stepsTotal && !o.stopRequested()) {
      const step = state.rlStep + 1;
      const prompts = nextPrompts(train, c.data.train_batch_size, c.trainer.seed, state.data);
      const r = await rlStep(
        {
          gpu,
          config: c,
          rollout: rolloutCtx,
          model,
          reference,
          grads,
          opt,
          stopIds: host.stopIds,
          lr: (k) => lrAt(c.actor.lr, c.actor.lr_schedule, k, optimizerStepsTotal),
        },
        step,
        prompts,
      );
      state.rlStep = step;
      const m = stepMetrics(r);
      await log.metric({ phase: "rl", step, time: new Date().toISOString(), ...m });
      await log.rollouts("rl", step, r.trajectories, host.tokenizer);
      bar.tick(1, `reward ${m.reward_mean.toFixed(2)} success ${(100 * m.success_rate).toFixed(0)}%`);
      rep.line(
        `step ${step}/${stepsTotal}  reward ${m.reward_mean.toFixed(3)}  success ${
          (100 * m.success_rate).toFixed(1)
        }%  ` +
          `rounds ${m.rounds_mean.toFixed(1)}/${m.rounds_max}  loss ${m.policy_loss.toFixed(4)}  kl ${
            m.kl.toFixed(4)
          }  ` +
          `entropy ${m.entropy.toFixed(3)}  grad ${m.grad_norm.toFixed(2)}  ${m.tokens_per_s.toFixed(0)} tok/s`,
      );
      if (c.trainer.test_freq > 0 && step % c.trainer.test_freq === 0 && step < stepsTotal) await runEval("rl", step);
      if (c.trainer.save_freq > 0 && step % c.trainer.save_freq === 0) {
        lastCheckpoint = await save(opt, `rl-step-${String(step).padStart(6, "0")}`);
      }
    }
    if (state.rlStep < stepsTotal) {
      lastCheckpoint = await save(opt, `rl-step-${String(state.rlStep).padStart(6, "0")}`);
      return { runDir: o.runDir, interrupted: true, sftEval, seconds: secondsSince(start), lastCheckpoint };
    }
    bar.done();
    const finalEval = await runEval("final", state.rlStep);
    state.notes.finalEval = finalEval;
    lastCheckpoint = await save(opt, "final");
    return { runDir: o.runDir, interrupted: false, sftEval, finalEval, seconds: secondsSince(start), lastCheckpoint };
  } finally {
    await env.close();
  }
}

/** The SFT data of each epoch: oracle episodes (renamed copies as configured) or an AgentGym trajectory file. */
async function sftData(
  c: RunConfig,
  task: Task,
  host: HostModel,
  client: EnvClient,
  rep: Reporter,
): Promise<(epoch: number) => TrainSequence[]> {
  const stopId = host.stopIds[0];
  if (c.sft.data !== "oracle") {
    const seqs = agentGymSequences(await Deno.readTextFile(c.sft.data), host.tokenizer, stopId, c.sft.data);
    return () => seqs;
  }
  const train = await splitIndices(c, task, "train");
  const episodes = await oracleEpisodes({ tokenizer: host.tokenizer, client, task, stopId }, train, {
    format: c.sft.oracle_format,
    maxPromptLength: c.rollout.max_prompt_length,
    maxResponseLength: c.rollout.max_response_length,
    onSkipped: (n) => n > 0 && rep.line(`SFT: ${n} oracle plans do not fit max_response_length and are left out`),
  });
  const renamer = c.sft.rename_items > 0 ? new ItemRenamer(await CraftingTree.load()) : undefined;
  return renamedEpochs(new ChatRenderer(host.tokenizer), task.prompt, episodes, {
    stopId,
    renamer,
    renameShare: c.sft.rename_items,
    dropDistractors: c.sft.drop_distractors,
    epochs: c.sft.epochs,
    seed: c.trainer.seed,
  });
}

/** The next `count` prompts of the shuffled training data (reshuffled each epoch), advancing `pos`. */
export function nextPrompts(
  indices: readonly number[],
  count: number,
  seed: number,
  pos: { epoch: number; offset: number },
) {
  const out: number[] = [];
  while (out.length < count) {
    const order = new Rng(seed * 31 + pos.epoch).shuffle([...indices]);
    const take = Math.min(count - out.length, order.length - pos.offset);
    out.push(...order.slice(pos.offset, pos.offset + take));
    pos.offset += take;
    if (pos.offset >= order.length) {
      pos.epoch++;
      pos.offset = 0;
    }
  }
  return out;
}

/** The frozen reference policy for the KL loss: the weights RL started from, as saved in the run folder. */
async function referenceModel(c: RunConfig, runDir: string, state: TrainerState, gpu: Gpu) {
  if (!c.actor.use_kl_loss || !state.reference) return undefined;
  const ref = await loadModelDir(`${runDir}/${state.reference}`);
  return new Transformer(gpu, ref.config, TensorSet.fromHost(gpu, ref.config, ref.tensors));
}

/** A resumed run's model: the checkpoint's weights and tokenizer. */
function fromCheckpoint(r: LoadedCheckpoint): HostModel {
  if (!r.tokenizer) throw new SyntaxError(`${r.dir} has no tokenizer.json`);
  return {
    config: r.config,
    tensors: r.tensors,
    tokenizer: r.tokenizer,
    stopIds: stopTokenIds({ config: r.config, tokenizer: r.tokenizer }),
    source: r.dir,
  };
}

function secondsSince(t: number): number {
  return (performance.now() - t) / 1000;
}
