/**
 * A pretraining run (`deno task pretrain`): the built-in tiny model (or a checkpoint) trained on the task's
 * synthetic tasks in chunks, each ending with a held-out evaluation and a checkpoint, in a run folder like
 * `deno task train`'s (config.yaml, metrics.jsonl, evals.jsonl, rollouts.jsonl, checkpoints/, report.html).
 * `minutes` ends the run early with a checkpoint, so hours of pretraining can be spread over sessions.
 */
import { stringify } from "yaml";
import { EnvClient } from "../env/client.ts";
import { getGpu } from "../gpu/device.ts";
import { Generator } from "../model/generate.ts";
import type { Task, TextEpisode } from "../task/task.ts";
import {
  checkpointName,
  freshState,
  hostFromCheckpoint,
  loadLatestCheckpoint,
  saveCheckpoint,
} from "../train/checkpoint.ts";
import { type AgentSettings, agentSettings } from "../train/agent_settings.ts";
import { coverage, type EvalResult, evaluate } from "../train/eval.ts";
import { createLearner, type Learner, phaseOptimizer, SkipGuard } from "../update/learner.ts";
import { RunLog } from "../train/metrics.ts";
import type { AdamW } from "../update/optimizer.ts";
import {
  type CopyAccuracy,
  copyAccuracy,
  lookupAccuracy,
  pretrainBatch,
  type PretrainData,
  pretrainData,
  recoveryCount,
} from "./data.ts";
import { rolloutOptions } from "../rollout/options.ts";
import { lrAt } from "../rl/schedule.ts";
import { configuredTask, loadModel } from "../train/setup.ts";
import { supervisedStep } from "../train/sft.ts";
import type { HostModel, LoadedCheckpoint, RunOptions, TrainerState } from "../train/types.ts";

/** Options of {@linkcode runPretraining}. */
export interface PretrainOptions extends RunOptions {
  /** Stop (with a checkpoint) after this many minutes of this session. */
  minutes?: number;
}

/** What a pretraining session did. */
export interface PretrainSummary {
  /** The run folder. */
  runDir: string;
  /** Optimizer steps done in all (of config pretrain.steps). */
  step: number;
  /** Whether every step of pretrain.steps is done (false when a stop request ended the session). */
  finished: boolean;
  /** Wall time of this session. */
  seconds: number;
  /** The latest held-out evaluation. */
  lastEval?: EvalResult;
  /** The latest copy-string accuracies, where the task's curriculum has copy strings. */
  copy?: CopyAccuracy;
  /** The latest checkpoint's folder. */
  lastCheckpoint?: string;
}

/** Runs (or resumes) pretraining until the configured steps, a stop request or the time limit. */
export async function runPretraining(o: PretrainOptions): Promise<PretrainSummary> {
  const start = performance.now(), c = o.config, p = c.pretrain;
  const deadline = o.minutes === undefined ? Infinity : start + o.minutes * 60_000;
  const { task, options } = await configuredTask(c);
  if (!task.synthetic) throw new RangeError(`The ${task.name} task has no synthetic tasks to pretrain on`);
  if (p.eval_seed === p.seed) {
    throw new RangeError(
      `pretrain.eval_seed (${p.eval_seed}) must differ from pretrain.seed: held-out tasks stay unseen`,
    );
  }
  const synthetic = await task.synthetic(options);
  await Deno.mkdir(o.runDir, { recursive: true });
  const resumed = o.resume ? await latestOrNone(o.runDir) : undefined;
  const host = resumed ? hostFromCheckpoint(resumed) : await loadModel(c, task);
  if (!resumed) await Deno.writeTextFile(`${o.runDir}/config.yaml`, stringify(c));
  const gpu = await getGpu();
  o.reporter.line(`Pretraining in ${o.runDir}: ${host.source} (vocab ${host.config.vocabSize}); ${gpu.name}`);
  const learner = createLearner(gpu, host);
  const opt = phaseOptimizer(learner, c, { weightDecay: p.weight_decay, maxGradNorm: p.grad_clip });
  if (resumed?.moments) opt.restore(resumed.moments.m, resumed.moments.v, resumed.state.optimizerStep);
  const state: TrainerState = resumed ? structuredClone(resumed.state) : freshState("pretrain");
  const heldOut = Array.from({ length: p.eval_tasks }, (_, i) => synthetic.heldOut(p.eval_seed, i));
  const data = pretrainData(task, synthetic, host.tokenizer, {
    stopId: host.stopIds[0],
    heldOut: heldOut.map((e) => e.opening),
  });
  const server = await synthetic.serve(p.eval_seed);
  const client = new EnvClient(task.adapter, { urls: [server.url] });
  const session: Session = {
    o,
    agent: agentSettings(c, task, options),
    task: { ...task, category: synthetic.category },
    host,
    learner,
    opt,
    state,
    data,
    counted: performance.now(),
  };
  try {
    const summary = await train(session, { client, heldOut, deadline });
    summary.seconds = (performance.now() - start) / 1000;
    return summary;
  } finally {
    client.close();
    await server.shutdown();
    opt.release();
  }
}

interface Session {
  o: PretrainOptions;
  agent: AgentSettings;
  task: Task;
  host: HostModel;
  learner: Learner;
  opt: AdamW;
  state: TrainerState;
  data: PretrainData;
  /** When the time in state.notes.seconds was last brought up to date (performance.now()). */
  counted: number;
}

/** What a session evaluates with, and until when it runs. */
interface Evaluation {
  client: EnvClient;
  heldOut: TextEpisode[];
  deadline: number;
}

async function train(s: Session, e: Evaluation): Promise<PretrainSummary> {
  const c = s.o.config, p = c.pretrain, log = new RunLog(s.o.runDir);
  const summary: PretrainSummary = { runDir: s.o.runDir, step: s.state.sftStep, finished: false, seconds: 0 };
  const bar = s.o.reporter.bar("pretrain", p.steps);
  bar.tick(s.state.sftStep);
  let saved = s.state.sftStep;
  const lr = (k: number) => lrAt(p.lr, p.lr_schedule, k, p.steps);
  const guard = new SkipGuard(c.trainer.max_skipped_steps, "pretrain.lr", p.lr);
  while (s.state.sftStep < p.steps && !s.o.stopRequested() && performance.now() < e.deadline) {
    const step = s.state.sftStep + 1;
    const batch = pretrainBatch(s.data, p, step);
    const { sequenceLoss, ...r } = await supervisedStep(s.learner, s.opt, {
      seqs: batch.seqs,
      microBatchTokens: c.actor.ppo_micro_batch_tokens,
      contextWeight: p.context_loss_weight,
      // The schedule follows the pretraining step, not AdamW's own count, which starts again from zero when a run
      // goes on from a saved model (its moments are not saved): else the warm-up and the cosine would start over.
      lr: () => lr(step),
    });
    const meanOf = (keep: (i: number) => boolean) => {
      const xs = sequenceLoss.filter((x, i) => keep(i) && Number.isFinite(x));
      return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    const mean = (copy: boolean) => meanOf((i) => (batch.kinds[i] !== null) === copy);
    // Each kind of copy string's mean loss, for the kinds this batch holds (a kind it lacks is absent, not 0).
    const byKind = Object.fromEntries(
      [...new Set(batch.kinds)].filter((k) => k !== null).sort().map((k) => [k, meanOf((i) => batch.kinds[i] === k)]),
    );
    s.state.sftStep = step;
    s.state.notes.tokens = Number(s.state.notes.tokens ?? 0) + r.tokens;
    await log.metric({
      phase: "pretrain",
      step,
      time: new Date().toISOString(),
      ...r,
      task_loss: mean(false),
      copy_loss: mean(true),
      ...(Object.keys(byKind).length > 0 ? { copy_loss_by_kind: byKind } : {}),
    });
    bar.tick(1, `loss ${r.loss.toFixed(3)}`);
    if (guard.record(r.applied)) {
      countTime(s);
      await save(s);
      throw guard.error("Start the pretraining again with a lower pretrain.lr (a resumed one keeps its config).");
    }
    if (step % p.chunk_steps === 0 || step === p.steps) {
      countTime(s);
      Object.assign(summary, await endChunk(s, log, e));
      saved = step;
    }
  }
  if (saved < s.state.sftStep) {
    countTime(s);
    summary.lastCheckpoint = await save(s);
  }
  summary.step = s.state.sftStep;
  summary.finished = s.state.sftStep >= p.steps;
  if (summary.finished) bar.done();
  return summary;
}

/** A chunk's end: the held-out evaluation, the copy accuracy, a checkpoint. */
async function endChunk(s: Session, log: RunLog, e: Evaluation): Promise<Partial<PretrainSummary>> {
  const c = s.o.config, p = c.pretrain, step = s.state.sftStep;
  const generator = new Generator(s.learner.model, {
    slots: c.rollout.slots,
    maxLen: c.rollout.max_prompt_length + c.rollout.max_response_length,
    blockSteps: c.rollout.block_steps,
    cache: c.rollout.kv_cache,
  });
  const ctx = { generator, tokenizer: s.host.tokenizer, client: e.client, task: s.task };
  const played = await evaluate(ctx, Array.from({ length: p.eval_tasks }, (_, i) => i), {
    ...rolloutOptions(c, s.task.maxRounds, s.host.stopIds, 0),
    samples: 1,
    seed: p.eval_seed,
  });
  // Held-out tasks are drawn fresh from pretrain.eval_seed: the set is exactly eval_tasks long.
  const result: EvalResult = { ...played.result, split: "held-out", splitTasks: p.eval_tasks };
  const trajectories = played.trajectories;
  generator.release();
  const copy = await copyAccuracy(s.learner, s.data, e.heldOut);
  const lookup = await lookupAccuracy(s.learner, s.data, p.eval_seed, p.eval_tasks);
  const refused = s.data.synthetic.refused;
  const recovery = refused ? recoveryCount(trajectories, refused) : undefined;
  s.state.notes.lastEval = { step, success: result.avg, copy };
  await log.evaluation({ phase: "pretrain", step, time: new Date().toISOString(), ...result, copy, lookup, recovery });
  await log.rollouts("eval-pretrain", step, trajectories, s.host.tokenizer);
  const depths = Object.entries(result.byCategory).map(([k, r]) => `${k} ${(100 * r.avg).toFixed(0)}%`).join(", ");
  s.o.reporter.line(
    `step ${step}: held-out success ${(100 * result.avg).toFixed(1)}% ${coverage(result)} (${depths}); names copied ${
      (100 * copy.names).toFixed(1)
    }%, replies exact ${(100 * copy.replies).toFixed(1)}% (first ${(100 * copy.first).toFixed(1)}%), reply NLL ${
      copy.nll.toFixed(3)
    }${lookup ? `; drill asks looked up ${(100 * lookup.exact).toFixed(1)}% of ${lookup.asks}` : ""}${
      lookup?.links !== undefined ? ` (their links ${(100 * lookup.links).toFixed(1)}% of ${lookup.linkTokens})` : ""
    }${recovery ? `; ${recovery.recovered} of ${recovery.refused} refused actions recovered` : ""}`,
  );
  return { lastEval: result, copy, lastCheckpoint: await save(s) };
}

/**
 * Adds the time since it was last counted to state.notes.seconds (and to this adapter's share in
 * state.notes.adapters, by adapter name, for the model card): at a chunk's end before its evaluation (which counts
 * in the next chunk) and before a stop's checkpoint, so a resumed run adds its own time and loses none of the one it
 * resumes.
 */
function countTime(s: Session): void {
  const now = performance.now(), seconds = (now - s.counted) / 1000;
  s.state.notes.seconds = Number(s.state.notes.seconds ?? 0) + seconds;
  const adapters = { ...(s.state.notes.adapters as Record<string, number> | undefined) };
  const adapter = s.learner.gpu.name;
  adapters[adapter] = (adapters[adapter] ?? 0) + seconds;
  s.state.notes.adapters = adapters;
  s.counted = now;
}

function save(s: Session): Promise<string> {
  const name = checkpointName("pretrain", s.state.sftStep);
  return saveCheckpoint(s.o.runDir, name, {
    config: s.host.config,
    weights: s.learner.model.weights,
    tokenizer: s.host.tokenizer,
    opt: s.opt,
    state: { ...s.state, optimizerStep: s.opt.step },
    agent: s.agent,
  });
}

/** The folder's latest checkpoint, or undefined when the run stopped before its first one (it starts over). */
async function latestOrNone(runDir: string): Promise<LoadedCheckpoint | undefined> {
  try {
    return await loadLatestCheckpoint(runDir);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}
